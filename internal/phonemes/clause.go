package phonemes

import (
	"strings"
	"unicode"
)

// clauseType holds espeak-ng's clause terminator bits (translate.h in espeak-ng 1.51): the pause
// in units of 10 ms, the intonation, whether a space must follow, and whether the clause ends a
// sentence. Piper reads these bits from espeak_TextToPhonemesWithTerminator; libespeak-ng 1.51
// does not report them, so clauseEnd recomputes them from the text (see doc.go).
type clauseType uint32

const (
	clauseOptionalSpaceAfter   clauseType = 0x00008000
	clauseTypeClause           clauseType = 0x00040000
	clauseTypeSentence         clauseType = 0x00080000
	clauseTypeEOF              clauseType = 0x00010000
	clausePunctuationInWord    clauseType = 0x00100000
	clauseSpeakPunctuationName clauseType = 0x00200000
	clauseDotAfterLastWord     clauseType = 0x00400000

	intonationFullStop    clauseType = 0x00000000
	intonationComma       clauseType = 0x00001000
	intonationQuestion    clauseType = 0x00002000
	intonationExclamation clauseType = 0x00003000
	intonationNone        clauseType = 0x00004000

	clauseNone        = 0 | intonationNone
	clauseParagraph   = 70 | intonationFullStop | clauseTypeSentence
	clauseEOF         = 40 | intonationFullStop | clauseTypeSentence | clauseTypeEOF
	clausePeriod      = 40 | intonationFullStop | clauseTypeSentence
	clauseComma       = 20 | intonationComma | clauseTypeClause
	clauseQuestion    = 40 | intonationQuestion | clauseTypeSentence
	clauseExclamation = 45 | intonationExclamation | clauseTypeSentence
	clauseColon       = 30 | intonationFullStop | clauseTypeClause
	clauseSemicolon   = 30 | intonationComma | clauseTypeClause

	// piperTerminatorMask is the part of the terminator Piper compares with the constants above;
	// a terminator with clauseOptionalSpaceAfter or clauseTypeEOF set therefore matches none of them.
	piperTerminatorMask clauseType = 0x000FFFFF
	// punctuationRunMask is the test ReadClause applies to the character after a clause
	// punctuation mark ("CLAUSE_QUESTION | CLAUSE_EXCLAMATION"): any punctuation with a clause type
	// passes it, so a run like "?!" or ".," is read as one terminator, the first of the run.
	punctuationRunMask = clauseQuestion | clauseExclamation
)

// piperMark is the text Piper appends to a clause's phonemes for its terminator, and whether the
// clause ends a sentence. Commas, colons and semicolons get a space after the mark because the
// sentence goes on.
func piperMark(t clauseType) (mark string, endsSentence bool) {
	switch t & piperTerminatorMask {
	case clausePeriod:
		mark = "."
	case clauseQuestion:
		mark = "?"
	case clauseExclamation:
		mark = "!"
	case clauseComma:
		mark = ", "
	case clauseColon:
		mark = ": "
	case clauseSemicolon:
		mark = "; "
	}
	return mark, t&clauseTypeSentence == clauseTypeSentence
}

func clauseTypeOf(r rune) clauseType {
	if t, ok := clauseTypeByRune[r]; ok {
		return t
	}
	return clauseNone
}

// clauseEnd recomputes the terminator espeak-ng's ReadClause returned for one clause.
//
// clause is every character ReadClause read for it: the character it pushed back at the end of
// the previous clause (if any), then the characters the text pointer moved over. reachedEOF says
// the text pointer came back NULL, i.e. ReadClause also read the string's terminating NUL; the NUL
// is then not in clause.
//
// It replays ReadClause's end-of-clause rules (those that apply to plain text without SSML) and
// takes the first place where ReadClause would stop having read exactly the whole clause. Rules
// that can keep a clause going which we do not model (for example Hungarian ordinal numbers) are
// harmless: if a replayed end would stop before the end of clause, espeak-ng evidently did not stop
// there, and the replay goes on as if that end had been cancelled.
func clauseEnd(clause []rune, reachedEOF bool, rules languageRules) clauseType {
	chars := clause
	if reachedEOF {
		chars = append(chars[:len(chars):len(chars)], 0)
	}
	pos := 0 // index of the next character GetC returns
	getc := func() rune {
		if pos >= len(chars) {
			pos++ // past what espeak-ng read: any end found from here cannot match
			return 0
		}
		r := chars[pos]
		pos++
		return r
	}
	// ungetc models UngetC: pushing back NUL is a no-op there.
	ungetc := func(r rune) {
		if r != 0 {
			pos--
		}
	}
	eof := func() bool { return reachedEOF && pos >= len(chars) }
	endsHere := func() bool { return pos == len(chars) }

	c1, cprev, cprev2 := ' ', ' ', ' '
	var c2 rune
	if !eof() {
		c2 = getc()
	}
	anyAlnum, stressedWord := false, false
	for !eof() && pos <= len(chars) {
		cprev2, cprev = cprev, c1
		c1 = c2
		if eof() {
			c2 = ' '
		} else {
			c2 = getc()
		}
		if isAlnum(c1) {
			anyAlnum = true
		} else if stressedWord {
			// After Armenian in-word punctuation the next non-alphanumeric character is replaced
			// by an emphasis marker, and the character after it is read again.
			stressedWord = false
			c1 = charEmphasis
			ungetc(c2)
			c2 = ' '
		}

		if c1 == '\n' {
			paragraph := 0
			for !eof() && isSpace(c2) {
				if c2 == '\n' {
					paragraph++
				}
				c2 = getc()
			}
			if paragraph > 0 && endsHere() {
				return clauseParagraph
			}
			// Otherwise espeak-ng read on, so it did not stop here; carry on after c2.
		}

		if c1 == '.' && c2 == '.' {
			var next rune
			for next = getc(); next == '.'; next = getc() {
				c1 = '\u2026' // three or more dots read as an ellipsis
				c2 = ' '
			}
			if c1 == '\u2026' {
				c2 = next
			} else {
				ungetc(next)
			}
		}

		punct := clauseTypeOf(c1)
		if punct == clauseNone {
			continue
		}
		if punct&punctuationRunMask != 0 {
			for clauseTypeOf(c2)&punctuationRunMask != 0 {
				c2 = getc()
			}
		}
		if punct&clausePunctuationInWord != 0 {
			stressedWord = true
			continue
		}
		if !(isSpace(c2) || punct&clauseOptionalSpaceAfter != 0 || isBracket(c2) || c2 == '?' || eof() || c2 == 1) {
			continue
		}

		newlines := 0
		next := c2
		if isSpace(next) {
			for !eof() && isSpace(next) {
				if next == '\n' {
					newlines++
				}
				next = getc()
			}
		}
		if c1 == '.' && newlines < 2 {
			punct |= clauseDotAfterLastWord
		}
		isEnd := true
		if newlines == 0 {
			if c1 == ',' && cprev == '.' && rules.hungarianOrdinalComma && isDigit(cprev2) && (isDigit(next) || isLower(next)) {
				c1 = commaBreak // "december 2., szerda": the comma after an ordinal is no clause end
				isEnd = false
			}
			if c1 == '.' && next == '\'' && pos < len(chars) && chars[pos] == 's' {
				isEnd = false // an acronym's genitive, e.g. "u.s.a.'s"
			}
			if c1 == '.' {
				if rules.ordinalDot && (isDigit(cprev) || (isRoman(cprev) && (isRoman(cprev2) || isSpace(cprev2)))) {
					// A dot after a number is an ordinal ("3. Oktober", "Ludwig XIV. war").
					if !isDigit(cprev) || isLower(next) || next == '-' {
						isEnd = false
					}
				}
				if isLower(next) && !rules.lowercaseSentence {
					isEnd = false // probably an abbreviation
				}
				if !anyAlnum {
					c1 = ' '
					isEnd = false
				}
			} else if !anyAlnum {
				isEnd = false
			}
		}
		if isEnd && endsHere() {
			if newlines > 1 {
				if punct == clauseQuestion || punct == clauseExclamation {
					return punct + 35 // a paragraph after ? or !: longer pause, still a sentence end
				}
				return clauseParagraph
			}
			return punct
		}
		// The clause goes on: either a rule above cancelled the end, or espeak-ng read further
		// than this end would have, so some rule we do not model cancelled it. ReadClause then
		// pushes back the look-ahead character when it had skipped spaces to find it.
		if !eof() && isSpace(c2) {
			ungetc(next)
		}
	}
	if reachedEOF {
		return clauseEOF
	}
	// espeak-ng ended the clause without punctuation: its buffer was nearly full.
	return clauseNone
}

// charEmphasis stands for espeak-ng's CHAR_EMPHASIS; only its being neither punctuation nor
// alphanumeric matters here.
const charEmphasis = 0x0530

// commaBreak stands for espeak-ng's CHAR_COMMA_BREAK, which replaces a comma that does not end a
// clause; only its being neither "." nor alphanumeric matters here.
const commaBreak = 0x0557

// languageRules are the language options that change where ReadClause ends clauses.
type languageRules struct {
	ordinalDot            bool // NUM_ORDINAL_DOT: a dot after a number or Roman numeral is an ordinal
	hungarianOrdinalComma bool // a comma after "2." is not a clause end (translator "hu" only)
	lowercaseSentence     bool // a full stop ends a sentence even before a lower-case letter
}

// rulesForLanguage returns the rules of espeak-ng 1.51's translator for a voice's first language
// (e.g. "de" or "en-us"): the translator is named by the part before the first "-". The lists are
// tr_languages.c's languages with NUM_ORDINAL_DOT and the voices with "lowercaseSentence".
func rulesForLanguage(language string) languageRules {
	translator, _, _ := strings.Cut(language, "-")
	switch translator {
	case "da", "de", "et", "fi", "hu", "kl", "lt", "lv", "ltg", "nl", "nb", "sl", "smj":
		return languageRules{ordinalDot: true, hungarianOrdinalComma: translator == "hu"}
	case "ka":
		return languageRules{lowercaseSentence: true}
	}
	return languageRules{}
}

// isDigit is espeak-ng's iswdigit (ucd_isdigit): ASCII digits only.
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// isRoman is ReadClause's IsRomanU.
func isRoman(r rune) bool { return r == 'I' || r == 'V' || r == 'X' || r == 'L' }

// isLower is espeak-ng's iswlower (ucd_islower).
func isLower(r rune) bool {
	if unicode.IsLower(r) || unicode.Is(unicode.Other_Lowercase, r) {
		return true
	}
	return unicode.IsTitle(r) && unicode.ToUpper(r) != r
}

// isSpace is espeak-ng's iswspace (ucd_isspace): Unicode separators except no-break spaces, and
// the white-space control characters.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x85:
		return true
	case 0xA0, 0x2007, 0x202F:
		return false
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// isAlnum is espeak-ng's iswalnum (ucd_isalnum): letters, numbers and alphabetic marks.
func isAlnum(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Other_Alphabetic, r)
}

// isBracket is espeak-ng's IsBracket: brackets, quotes, and U+2014..U+201F (dashes and curly quotes).
func isBracket(r rune) bool {
	if r >= 0x2014 && r <= 0x201F {
		return true
	}
	switch r {
	case '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', '`', 0xAB, 0xBB, 0x300A, 0x300B, 0xE000 + '<':
		return true
	}
	return false
}
