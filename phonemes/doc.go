// Package phonemes turns text into the phoneme sentences and model input ids that Piper
// (piper1-gpl / piper-phonemize) produces, so that any downloaded Piper voice hears exactly the
// input it was trained on.
//
// # How Piper phonemizes
//
// Piper calls espeak_TextToPhonemesWithTerminator clause by clause. Each call returns the IPA
// phonemes of one clause and the clause's terminator, the clause type espeak-ng's ReadClause
// found. Piper removes language-switch flags such as "(fr)", appends "." "?" or "!" for a full
// stop, question or exclamation, and ", " ": " or "; " for a comma, colon or semicolon; any other
// terminator (an ellipsis, a paragraph break, fullwidth punctuation, end of text) appends nothing.
// A terminator of sentence type ends the sentence. Each sentence's phonemes are decomposed (NFD) and
// every code point is one phoneme. IDs lays them out as ^ _ p1 _ p2 _ ... pn _ $.
//
// # Reconstructing the terminator
//
// Debian's libespeak-ng 1.51 has only espeak_TextToPhonemes, which returns the same phonemes but
// not the terminator. What it does reveal is how far it read: on return the text pointer has moved
// past every character ReadClause read for the clause, or is NULL once it has read the string's
// final NUL. ReadClause always reads one character too many (after a mark it skips spaces and reads
// the next character to see, for example, whether a full stop is followed by a lower-case letter) and
// pushes that character back into a C global, where the next call reads it first.
//
// So for each clause this package knows exactly the characters ReadClause read: the pushed-back
// character of the previous clause, then the characters the pointer moved over. clauseEnd replays
// ReadClause's end-of-clause rules of espeak-ng 1.51 over them (three dots make an ellipsis, a run
// like "?!" counts as its first mark, a mark ends a clause only before white space, a bracket or
// quote, or the end of text, a full stop before a lower-case word or in a clause without letters
// does not, two newlines make a paragraph) and keeps the end at which ReadClause would have read
// precisely those characters. Which characters are clause punctuation, and of which kind, comes from
// espeak-ng's own Unicode property table (clausetable.go). A simpler rule, "the last of . ? ! , : ;
// in the consumed text", gets "Hello?!" (Piper: "?") and "Wait... what?" (Piper: no mark) wrong.
//
// libespeak-ng is process-global C state (current voice, decoder, pushed-back character), so all
// calls into it are serialised by one mutex and the voice is set only when it changes.
package phonemes
