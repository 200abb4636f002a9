package phonemes

/*
#cgo LDFLAGS: -lespeak-ng
#include <stdlib.h>
#include <espeak-ng/speak_lib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// libespeak-ng keeps its state (current voice, text decoder, the character pushed back between
// clauses) in process-global C variables, so it is initialised once and every call into it holds
// espeakMu. espeakRules belongs to the voice selected last.
var (
	espeakMu       sync.Mutex
	espeakInitDone bool
	espeakDataPath string // the dataPath the library was initialised with
	espeakRules    languageRules
)

// Espeak phonemizes with libespeak-ng exactly as Piper does. Safe for concurrent use (calls are
// serialised).
type Espeak struct{}

// NewEspeak initialises libespeak-ng (once per process; later calls share it). dataPath "" = library
// default. A later call asking for a different non-empty dataPath is an error, because the library
// cannot be initialised twice.
func NewEspeak(dataPath string) (*Espeak, error) {
	espeakMu.Lock()
	defer espeakMu.Unlock()
	if espeakInitDone {
		if dataPath != "" && dataPath != espeakDataPath {
			return nil, fmt.Errorf("phonemes: espeak-ng already initialised with data path %q, cannot switch to %q", espeakDataPath, dataPath)
		}
		return &Espeak{}, nil
	}
	var cPath *C.char
	if dataPath != "" {
		cPath = C.CString(dataPath)
		defer C.free(unsafe.Pointer(cPath))
	}
	// Synchronous output with no callback: we only ask for phonemes, never audio.
	if rate := C.espeak_Initialize(C.AUDIO_OUTPUT_SYNCHRONOUS, 0, cPath, 0); rate < 0 {
		where := "the default data path"
		if dataPath != "" {
			where = fmt.Sprintf("data path %q", dataPath)
		}
		return nil, fmt.Errorf("phonemes: initialise espeak-ng with %s: error %d", where, int(rate))
	}
	espeakInitDone = true
	espeakDataPath = dataPath
	return &Espeak{}, nil
}

// languageFlag matches espeak-ng's language-switch markers such as "(en)" or "(fr)", which it puts
// around words it reads in another language; Piper removes them with the same pattern.
var languageFlag = regexp.MustCompile(`\([^)]+\)`)

// Phonemize returns one phoneme string per sentence of text, for the espeak voice (e.g. "en-us").
// An unknown voice is an error that names the voice.
//
// Sentences whose phonemes are empty (for example the lone closing quote after `"Hi."`) are
// dropped. Invalid UTF-8, U+FFFD and control characters other than white space are replaced by
// spaces first, and a text ending in exactly two dots gets a space appended (see cleanText).
func (e *Espeak) Phonemize(text, voice string) ([]string, error) {
	return phonemesOf(e.Sentences(text, voice))
}

// Sentences is Phonemize with each sentence's text: the characters espeak-ng read for the sentence's clauses, as
// cleanText left them, without the white space around them. Every character of the text belongs to one sentence;
// a sentence without phonemes (the lone closing quote after `"Hi."`) is dropped as Phonemize drops it, and its
// text joins the sentence before it (or, at the start, the one after it).
func (e *Espeak) Sentences(text, voice string) ([]Sentence, error) {
	text = cleanText(text)

	espeakMu.Lock()
	defer espeakMu.Unlock()
	if !espeakInitDone {
		return nil, errors.New("phonemes: espeak-ng is not initialised; use NewEspeak")
	}
	if err := setVoice(voice); err != nil {
		return nil, err
	}
	clauses, err := textToClauses(text)
	if err != nil {
		return nil, fmt.Errorf("phonemes: phonemize %d bytes of text with voice %q: %w", len(text), voice, err)
	}
	return joinSentences(clauses), nil
}

// setVoice selects voice. The caller holds espeakMu.
//
// It does so on every call, even for the voice already selected, as Piper does: selecting a voice
// builds a fresh translator, and some texts leave state in the old one that changes the phonemes of
// later texts (found by FuzzPhonemize: after certain inputs, en-us read "Hello." as British English).
func setVoice(voice string) error {
	cVoice := C.CString(voice)
	defer C.free(unsafe.Pointer(cVoice))
	if rc := C.espeak_SetVoiceByName(cVoice); rc != C.EE_OK {
		return fmt.Errorf("phonemes: set espeak-ng voice %q: unknown voice or missing voice data (error %d)", voice, int(rc))
	}
	espeakRules = rulesForLanguage(currentVoiceLanguage())
	return nil
}

// currentVoiceLanguage returns the first language of the selected voice, e.g. "en-us". The caller
// holds espeakMu.
func currentVoiceLanguage() string {
	voice := C.espeak_GetCurrentVoice()
	if voice == nil || voice.languages == nil {
		return ""
	}
	// languages is a list of (priority byte, NUL-terminated name); the first name starts at byte 1.
	if *voice.languages == 0 {
		return ""
	}
	return C.GoString((*C.char)(unsafe.Add(unsafe.Pointer(voice.languages), 1)))
}

// nulPadding is how many NULs follow the text handed to libespeak-ng.
const nulPadding = 8

// clause is one piece of text espeak-ng phonemized at once, with the terminator it ended with, and its text: from
// where the clause before it ended to the character it read too many and pushed back (which the next clause reads
// first), or to the end of the text.
type clause struct {
	phonemes   string
	terminator clauseType
	text       string
}

// textToClauses runs espeak_TextToPhonemes over text clause by clause and recomputes each clause's
// terminator from the characters espeak-ng read for it (see doc.go). The caller holds espeakMu.
func textToClauses(text string) ([]clause, error) {
	// The copy ends in several NULs, not one: should ReadClause ever read past the terminating
	// NUL (it does for two final dots, which cleanText prevents), it reads NULs, not other memory.
	cText := (*C.char)(C.calloc(C.size_t(len(text)+nulPadding), 1))
	defer C.free(unsafe.Pointer(cText))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(cText)), len(text)), text)
	base := uintptr(unsafe.Pointer(cText))

	var clauses []clause
	var pushedBack []rune // the look-ahead character ReadClause pushed back, read again next clause
	owned := 0            // where the next clause's text starts: the bytes before it are earlier clauses'
	textPtr := unsafe.Pointer(cText)
	for textPtr != nil {
		start := int(uintptr(textPtr) - base)
		cPhonemes := C.espeak_TextToPhonemes(&textPtr, C.espeakCHARS_AUTO, C.espeakPHONEMES_IPA)
		if cPhonemes == nil {
			return nil, fmt.Errorf("espeak_TextToPhonemes failed at byte %d", start)
		}
		phonemes := C.GoString(cPhonemes)

		reachedEOF := textPtr == nil
		end := len(text)
		if !reachedEOF {
			end = int(uintptr(textPtr) - base)
			if end > len(text) {
				return nil, fmt.Errorf("espeak_TextToPhonemes read past the end of the text (to byte %d of %d)", end, len(text))
			}
			if end <= start && len(pushedBack) == 0 {
				// Nothing read and nothing pending: espeak-ng would loop forever.
				return nil, fmt.Errorf("espeak_TextToPhonemes made no progress at byte %d", start)
			}
		}
		read := append(pushedBack, []rune(text[start:end])...)
		pushedBack = nil
		ownEnd := end
		if !reachedEOF && end > start {
			// ReadClause always stops having read one character too many, which it pushes back.
			last, size := utf8.DecodeLastRuneInString(text[start:end])
			pushedBack = []rune{last}
			ownEnd = end - size
		}
		clauses = append(clauses, clause{phonemes: phonemes, terminator: clauseEnd(read, reachedEOF, espeakRules),
			text: text[owned:ownEnd]})
		owned = ownEnd
	}
	return clauses, nil
}

// joinSentences applies Piper's rules to espeak-ng's clauses: remove language-switch flags, append
// the terminator's mark, decompose (NFD), and start a new sentence after a sentence terminator. Each
// sentence's text is that of its clauses; the text of a sentence without phonemes, which is dropped,
// joins the sentence before it (or the first one).
func joinSentences(clauses []clause) []Sentence {
	var sentences []Sentence
	var sentence, text strings.Builder
	flush := func() {
		switch {
		case sentence.Len() > 0:
			sentences = append(sentences, Sentence{Text: text.String(), Phonemes: norm.NFD.String(sentence.String())})
			text.Reset()
		case len(sentences) > 0:
			sentences[len(sentences)-1].Text += text.String()
			text.Reset()
		}
		sentence.Reset()
	}
	for _, c := range clauses {
		mark, endsSentence := piperMark(c.terminator)
		sentence.WriteString(languageFlag.ReplaceAllString(c.phonemes, ""))
		sentence.WriteString(mark)
		text.WriteString(c.text)
		if endsSentence {
			flush()
		}
	}
	flush()
	for i := len(sentences) - 1; i > 0; i-- {
		// The quote that closes a sentence is the character ReadClause read too many after its mark: it goes back
		// to the sentence it closes.
		if n := closingRun(sentences[i].Text); n > 0 {
			sentences[i-1].Text += sentences[i].Text[:n]
			sentences[i].Text = sentences[i].Text[n:]
		}
	}
	for i := range sentences {
		sentences[i].Text = strings.TrimSpace(sentences[i].Text)
	}
	return sentences
}

// closingRun is how many bytes at the start of text are quotes or brackets followed by white space or the end:
// those that close the sentence before text.
func closingRun(text string) int {
	end := strings.IndexFunc(text, func(r rune) bool { return !isBracket(r) })
	if end < 0 {
		return len(text)
	}
	if r, _ := utf8.DecodeRuneInString(text[end:]); end > 0 && isSpace(r) {
		return end
	}
	return 0
}

// cleanText makes text safe to hand to libespeak-ng (see Phonemize).
func cleanText(text string) string {
	if !utf8.ValidString(text) || strings.IndexFunc(text, isUnsafeRune) >= 0 {
		text = strings.ToValidUTF8(text, " ")
		text = strings.Map(func(r rune) rune {
			if isUnsafeRune(r) {
				return ' '
			}
			return r
		}, text)
	}
	// With exactly two dots at the very end, ReadClause 1.51 reads the NUL while looking for a
	// third dot and then reads past the end of the string (undefined behaviour, in Piper too: the
	// phonemes then depend on whatever memory follows). A space after the dots makes it read them
	// as a full stop, and keeps it from leaving a pushed-back "." for the next text.
	if strings.HasSuffix(text, "..") && !strings.HasSuffix(text, "...") {
		text += " "
	}
	return breakLongWords(text)
}

// maxWordBytes: libespeak-ng 1.51 smashes its stack on a word of about 200 bytes or more ("rrr...", "abab...";
// found by FuzzPhonemize), in Piper too, killing the process. No word of a real language comes near 100 bytes, so
// breakLongWords cuts longer runs of non-space characters into pieces of at most this many bytes.
const maxWordBytes = 100

// breakLongWords puts a space into every run of more than maxWordBytes non-space bytes, at a rune boundary.
func breakLongWords(text string) string {
	if len(text) <= maxWordBytes {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/maxWordBytes)
	run := 0 // bytes of the current word so far
	for _, r := range text {
		n := utf8.RuneLen(r)
		switch {
		case isSpace(r):
			run = 0
		case run+n > maxWordBytes:
			b.WriteByte(' ')
			run = n
		default:
			run += n
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isUnsafeRune reports the characters cleanText replaces by a space: NUL ends the C string early;
// U+FFFD makes libespeak-ng decode the rest of the clause as an 8-bit character set; the other
// control characters (but tab, newline and the like) are not text, and U+0001 starts one of
// espeak-ng's embedded commands, some of which read past the end of the text and never stop.
func isUnsafeRune(r rune) bool {
	return r == utf8.RuneError || ((r < 0x20 || (r >= 0x7F && r < 0xA0)) && !isSpace(r))
}
