package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/ttsgen/ttsgen/internal/manifest"
)

// ReadTexts reads the texts to send from path: one text per non-empty line,
// surrounding spaces trimmed, read as UTF-8 or as UTF-16 with a byte-order mark. A file in which every non-empty line has exactly
// three '|'-separated fields is read as LJSpeech metadata (ID|text|normalized)
// and yields the normalized field, or the text field where that is empty.
func ReadTexts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading texts: %w", err)
	}
	defer f.Close()

	var lines []string
	// Read as every other input is: a byte-order mark dropped, UTF-16 decoded, and text that is not UTF-8 (a
	// Windows-1252 file, a binary one) an error naming its line instead of texts of garbage.
	sc := bufio.NewScanner(manifest.CheckedText(manifest.NewTextReader(f)))
	sc.Buffer(make([]byte, 64*1024), 1<<20) // long paragraphs are legitimate input
	sc.Split(scanAnyLineBreak)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" {
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading texts from %s: %w", path, err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("reading texts from %s: no non-empty lines", path)
	}

	if !isLJSpeech(lines) {
		return lines, nil
	}
	texts := make([]string, len(lines))
	for i, line := range lines {
		fields := strings.Split(line, "|")
		texts[i] = strings.TrimSpace(fields[2])
		if texts[i] == "" {
			texts[i] = strings.TrimSpace(fields[1])
		}
		if texts[i] == "" {
			return nil, fmt.Errorf("reading texts from %s: entry %s has no text", path, fields[0])
		}
	}
	return texts, nil
}

func isLJSpeech(lines []string) bool {
	for _, line := range lines {
		if strings.Count(line, "|") != 2 {
			return false
		}
	}
	return true
}

// scanAnyLineBreak is bufio.ScanLines with a lone "\r" (old Mac OS files) as a line break too, as manifests read it.
// Each "\r" and "\n" ends a line, so "\r\n" gives an empty one between them, which ReadTexts drops as it drops
// every empty line: no look past a "\r" is needed.
func scanAnyLineBreak(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil // more data, or the end
}
