package manifest

import (
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// NewTextReader reads r as a text file is read: a UTF-8 byte-order mark at its start is dropped, and a text that
// starts with a UTF-16 byte-order mark (what Windows Notepad saves as "Unicode", and Windows PowerShell 5's Out-File
// and > write) is decoded to UTF-8. Anything else passes through byte for byte: whether it is valid UTF-8 is for
// the reader to say, where it can name the line.
//
// To tell a byte-order mark it waits for the first three bytes of r (or its end), so a stream's first line of
// fewer than three bytes is held until more comes.
func NewTextReader(r io.Reader) io.Reader {
	return transform.NewReader(r, unicode.BOMOverride(transform.Nop))
}
