package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader splits a stream into lines in bounded memory. Unlike
// bufio.Scanner, an over-long line is reported and skipped instead of ending
// the whole scan. A line ends at "\n", "\r\n" or a lone "\r" (a file of old
// Mac OS, or of a tool that writes its line breaks so): a JSON line holds no
// raw "\r", which a string must escape.
type lineReader struct {
	r   *bufio.Reader
	max int // longest line kept, in bytes, not counting its line break
	buf []byte
	// afterCR says that the last line ended at "\r": a "\n" that comes next
	// belongs to that line break. It is looked for at the next call, so that
	// a stream's line is returned without waiting for the byte after it.
	afterCR bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line break. A line longer than max
// is returned as tooLong with no content; its bytes are read and dropped so
// that the following line is intact. The returned slice is valid until the
// next call. At the end of the input next returns io.EOF; a final line
// without a line break is still a line.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	seen := false
	for {
		if _, err := lr.r.Peek(1); err != nil { // waits for a byte, or the end
			switch {
			case !errors.Is(err, io.EOF):
				return nil, false, err
			case !seen:
				return nil, false, io.EOF
			}
			return lr.buf, tooLong, nil
		}
		avail, _ := lr.r.Peek(lr.r.Buffered())
		if lr.afterCR {
			lr.afterCR = false
			if avail[0] == '\n' {
				lr.r.Discard(1)
				continue
			}
		}
		seen = true
		frag, ended := avail, false
		if i := bytes.IndexAny(avail, "\r\n"); i >= 0 {
			frag, ended, lr.afterCR = avail[:i], true, avail[i] == '\r'
		}
		if !tooLong {
			if len(lr.buf)+len(frag) > lr.max {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, frag...)
			}
		}
		n := len(frag)
		if ended {
			n++ // the line break
		}
		lr.r.Discard(n)
		if ended {
			return lr.buf, tooLong, nil
		}
	}
}
