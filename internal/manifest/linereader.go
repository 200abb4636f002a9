package manifest

import (
	"bufio"
	"errors"
	"io"
)

// lineReader splits a stream into lines in bounded memory. Unlike
// bufio.Scanner, an over-long line is reported and skipped instead of ending
// the whole scan.
type lineReader struct {
	r   *bufio.Reader
	max int // longest line kept, in bytes, not counting the "\n"
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its "\n" (a trailing "\r" is kept; the
// caller decides). A line longer than max is returned as tooLong with no
// content; its bytes are read and dropped so that the following line is
// intact. The returned slice is valid until the next call. At the end of the
// input next returns io.EOF; a final line without "\n" is still a line.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	seen := false
	for {
		frag, err := lr.r.ReadSlice('\n')
		if len(frag) > 0 {
			seen = true
		}
		ended := err == nil // frag ends with '\n'
		if ended {
			frag = frag[:len(frag)-1]
		}
		if !tooLong {
			if len(lr.buf)+len(frag) > lr.max {
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, frag...)
			}
		}
		switch {
		case ended:
			return lr.buf, tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !seen {
				return nil, false, io.EOF
			}
			return lr.buf, tooLong, nil
		default:
			return nil, false, err
		}
	}
}
