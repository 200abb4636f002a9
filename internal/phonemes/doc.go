// Package phonemes turns text into the phoneme sentences and model input ids that Piper
// (piper1-gpl / piper-phonemize) produces, so that any downloaded Piper voice hears exactly the
// input it was trained on.
//
// # How Piper phonemizes
//
// Piper selects the espeak-ng voice and calls espeak_TextToPhonemesWithTerminator clause by clause.
// Each call returns the IPA phonemes of one clause and the clause's terminator, the clause type
// espeak-ng's ReadClause found. Piper removes language-switch flags such as "(fr)", appends "." "?"
// or "!" for a full stop, question or exclamation, and ", " ": " or "; " for a comma, colon or
// semicolon; any other terminator (an ellipsis, a paragraph break, fullwidth punctuation, the end of
// the text) appends nothing. A terminator of sentence type ends the sentence. Each sentence's
// phonemes are decomposed (NFD) and every code point is one phoneme. IDs lays them out as
// ^ _ p1 _ p2 _ ... pn _ $.
//
// # Raw phonemes
//
// As in piper1-gpl, "[[ həlˈoʊ ]]" in a text is a block of phonemes that goes to the voice as written: SplitRaw cuts
// a text into words and such blocks (the shortest "[[ ... ]]" on one line; the content trimmed of white space, each
// code point one phoneme, not decomposed). The pipeline's frontend phonemizes the words around them and joins a
// block into sentences the way Piper does.
//
// # Reconstructing the terminator
//
// Debian's libespeak-ng 1.51 has only espeak_TextToPhonemes, which returns the same phonemes but not
// the terminator. What it does reveal is how far it read: on return the text pointer has moved past
// every character ReadClause read for the clause, or is NULL once it has read the string's final
// NUL. ReadClause always reads one character too many (after a mark it skips spaces and reads the
// next character to see, for example, whether a full stop is followed by a lower-case letter) and
// pushes that character back into a C global, where the next call reads it first.
//
// So for each clause this package knows exactly which characters ReadClause read: the character
// pushed back at the end of the previous clause, then the characters the pointer moved over.
// clauseEnd replays ReadClause's end-of-clause rules of espeak-ng 1.51 over them and keeps the end at
// which ReadClause would have read precisely those characters. The rules: three or more dots are an
// ellipsis; in a run of marks such as "?!" or ";." the first one counts; a mark ends a clause only
// before white space, a bracket or quote, or the end of the text (fullwidth marks need no space); a
// full stop before a lower-case letter, or in a clause without letters or digits, ends nothing; in
// languages with ordinal dots (German, Danish, Dutch, Finnish, Hungarian, ...) a dot after a Roman
// numeral, or after a number and before a lower-case word, ends nothing; a blank line is a paragraph
// end; Armenian in-word punctuation swallows the next mark. Which characters are clause punctuation,
// and of which kind, comes from espeak-ng's own Unicode property table (clausetable.go). A simpler
// rule such as "the last of . ? ! , : ; in the consumed text" gets "Hello?!" (Piper: "?") and
// "Wait... what?" (Piper: no mark, words joined) wrong.
//
// The reconstruction is checked against a build of espeak-ng 1.51 that reports ReadClause's return
// value: all 14,577 LJSpeech texts (both transcript columns), 22,000 random punctuation-heavy texts
// for 20 voices and 200 long texts give the same sentences (testdata/refgen; a sample of them is the
// golden file of TestPhonemizeMatchesReference).
//
// # Where this package deliberately differs
//
// libespeak-ng 1.51 misbehaves on some input, and so does Piper with the same library: a text ending
// in exactly two dots makes ReadClause read past the end of the string; U+0001 starts an "embedded
// command", one of which never stops reading; NUL ends the C string; U+FFFD and invalid UTF-8 switch
// the rest of the clause to an 8-bit character set. Phonemize therefore replaces control characters
// (other than white space), U+FFFD and invalid UTF-8 by spaces and appends a space after two final
// dots; other text is passed through unchanged.
//
// libespeak-ng 1.51 also has memory bugs that no cleaning of the text avoids: when a word it reads
// with a second language's translator holds a character that language has no rule for, LookupLetter
// frees that translator while it is in use (fixed upstream after 1.51), and a few letter names
// overflow small stack buffers. AddressSanitizer shows them with non-English voices, mixed-language
// text and unusual characters, and arbitrary input crashes the process within seconds of fuzzing;
// all 14,577 LJSpeech texts (en-us) run clean under AddressSanitizer. FuzzPhonemize therefore keeps
// its input to Latin-1 and punctuation. That is why ttsgen phonemizes through Isolated: espeak-ng runs in a
// child process (this same executable, see ServeChildIfAsked), and a crash or a hang costs the text that caused
// it an error, after one retry in a fresh child, instead of killing a batch of thousands of items.
//
// libespeak-ng is process-global C state (current voice, decoder, pushed-back character), so all
// calls into it are serialised by one mutex. The voice is selected on every call, as Piper does,
// because a fresh voice also resets state that some texts leave behind.
package phonemes
