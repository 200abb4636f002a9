package bench

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// ReadTexts reads the texts to send from path: one text per non-empty line,
// surrounding spaces trimmed. A file in which every non-empty line has exactly
// three '|'-separated fields is read as LJSpeech metadata (ID|text|normalized)
// and yields the normalized field, or the text field where that is empty.
func ReadTexts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading texts: %w", err)
	}
	defer f.Close()

	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20) // long paragraphs are legitimate input
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if first {
			line = strings.TrimPrefix(line, "\uFEFF") // byte-order mark from Windows editors
		}
		line = strings.TrimSpace(line) // also drops the \r of CRLF files
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
