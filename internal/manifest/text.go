package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

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

// TextError is where a text stops being text: a NUL byte, which no text file holds (a binary file given by
// mistake, or UTF-16 without a byte-order mark), or a byte that is not UTF-8 (a file saved as Windows-1252 or
// Latin-1). Line and Column count as an editor does, from 1: a line ends at "\n", "\r\n" or a lone "\r", and a
// column is a character.
type TextError struct {
	Line, Column int
	Byte         byte // the byte found there
	// Binary says that the text holds a NUL byte (a NUL at or after the position).
	Binary bool
}

func (e *TextError) Error() string {
	if e.Binary {
		return fmt.Sprintf("NUL byte on line %d, column %d: this is binary data, not text (UTF-16 without a "+
			"byte-order mark?); save the text as UTF-8", e.Line, e.Column)
	}
	return fmt.Sprintf("invalid UTF-8 on line %d, column %d (byte 0x%02X): save the text as UTF-8 (from Windows-1252 "+
		"or Latin-1: iconv -f WINDOWS-1252 -t UTF-8)", e.Line, e.Column, e.Byte)
}

// textPos is a position in a text, as TextError gives it.
type textPos struct {
	line, column int
	afterCR      bool // the last byte was "\r": a "\n" now ends no other line
}

func startOfText() textPos { return textPos{line: 1, column: 1} }

// advance moves p over text, which is valid UTF-8 but may end in the first bytes of a character (not counted).
func (p *textPos) advance(text []byte) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n' && p.afterCR:
		case c == '\n' || c == '\r':
			p.line, p.column = p.line+1, 1
		case utf8.RuneStart(c):
			p.column++
		}
		p.afterCR = c == '\r'
	}
}

// checkText finds where data, which starts at pos, stops being text. It returns how many bytes of data are text
// and, where the rest is not, why. A character cut by the end of data is not counted, for the next call, unless
// atEnd. pos moves over the bytes that are text. A NUL anywhere in data makes it binary, whatever comes first: the
// error is then the NUL's.
func checkText(data []byte, atEnd bool, pos *textPos) (int, *TextError) {
	n := len(data)
	bad := -1
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		if !atEnd && !utf8.FullRune(data[i:]) {
			n = i
			break
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			n, bad = i, i
			break
		}
		i += size
	}
	if nul := bytes.IndexByte(data, 0); nul >= 0 {
		n = min(n, nul)
		at := *pos
		at.advance(data[:nul])
		pos.advance(data[:n])
		return n, &TextError{Line: at.line, Column: at.column, Byte: 0, Binary: true}
	}
	pos.advance(data[:n])
	if bad >= 0 {
		return n, &TextError{Line: pos.line, Column: pos.column, Byte: data[bad]}
	}
	return n, nil
}

// CheckText returns a *TextError where data is not UTF-8 text, nil where it is.
func CheckText(data []byte) error {
	pos := startOfText()
	if _, err := checkText(data, true, &pos); err != nil {
		return err
	}
	return nil
}

// CheckedText reads r, and fails with a *TextError where r stops being UTF-8 text; what comes before is read as it
// comes, so a stream is checked as it is read.
func CheckedText(r io.Reader) io.Reader { return &textChecker{r: r, pos: startOfText()} }

type textChecker struct {
	r    io.Reader
	pos  textPos
	buf  []byte
	out  []byte // checked text not read yet
	held []byte // the first bytes of a character cut by the last read
	err  error  // returned once out is read
}

func (c *textChecker) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if c.buf == nil {
			c.buf = make([]byte, 32<<10)
		}
		held := copy(c.buf, c.held)
		n, err := c.r.Read(c.buf[held:])
		data := c.buf[:held+n]
		atEnd := errors.Is(err, io.EOF)
		ok, bad := checkText(data, atEnd, &c.pos)
		c.out, c.held = data[:ok], append(c.held[:0], data[ok:]...)
		switch {
		case bad != nil:
			c.err = bad
		case err != nil:
			c.err = err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}
