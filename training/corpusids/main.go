// Command corpusids turns LJSpeech-style metadata into the phoneme ids that ttsgen's default voice is trained on,
// using ttsgen's own phonemizer, so training sees exactly the ids that `ttsgen synth` will feed the model.
//
//	go run ./training/corpusids -metadata PATH/TO/LJSpeech-1.1/metadata.csv -out .traindata/ids.txt
//
// Input lines are `ID|text|normalized text`; the normalized column is used. Output lines are
// `ID|id id id ...|normalized text`. As Piper's training preprocessing does, the phonemes of all sentences of one
// utterance are concatenated and then mapped to ids once (one BOS ... EOS per utterance).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ttsgen/ttsgen/internal/phonemes"
)

func main() {
	metadata := flag.String("metadata", "", "LJSpeech metadata.csv (ID|text|normalized); required")
	idMapPath := flag.String("idmap", "training/phoneme_id_map.json", "JSON phoneme_id_map (or a Piper voice config holding one)")
	out := flag.String("out", ".traindata/ids.txt", "output file, one `ID|ids|text` line per utterance")
	voice := flag.String("voice", "en-us", "espeak-ng voice")
	flag.Parse()
	if *metadata == "" {
		fmt.Fprintln(os.Stderr, "corpusids: -metadata is required (LJSpeech 1.1's metadata.csv)")
		os.Exit(2)
	}
	if err := run(*metadata, *idMapPath, *out, *voice); err != nil {
		fmt.Fprintln(os.Stderr, "corpusids:", err)
		os.Exit(1)
	}
}

func run(metadataPath, idMapPath, outPath, voice string) error {
	idMap, err := readIDMap(idMapPath)
	if err != nil {
		return err
	}
	in, err := os.Open(metadataPath)
	if err != nil {
		return fmt.Errorf("opening the metadata: %w", err)
	}
	defer in.Close()
	out, err := os.Create(outPath)
	if err != nil {
		return fmt.Errorf("creating the ids file: %w", err)
	}
	espeak, err := phonemes.NewEspeak("")
	if err != nil {
		return fmt.Errorf("starting espeak-ng: %w", err)
	}
	n, missing, err := convert(in, out, func(text string) ([]string, error) { return espeak.Phonemize(text, voice) }, idMap)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing the ids file: %w", cerr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "corpusids: %d utterances -> %s; phonemes not in the map (skipped): %q\n", n, outPath, missing)
	return nil
}

// convert writes one ids line per metadata line and returns how many it wrote and the distinct unknown phonemes.
func convert(in io.Reader, out io.Writer, phonemize func(string) ([]string, error), idMap map[string][]int64) (int, []string, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	w := bufio.NewWriter(out)
	seen := map[string]bool{}
	var missing []string
	n := 0
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(sc.Text(), "|")
		if len(fields) < 3 {
			return n, missing, fmt.Errorf("metadata line %d: want ID|text|normalized, got %d fields", line, len(fields))
		}
		id, text := fields[0], strings.TrimSpace(fields[2])
		sentences, err := phonemize(text)
		if err != nil {
			return n, missing, fmt.Errorf("phonemizing %s: %w", id, err)
		}
		ids, miss := phonemes.IDs(strings.Join(sentences, ""), idMap)
		for _, m := range miss {
			if !seen[m] {
				seen[m] = true
				missing = append(missing, m)
			}
		}
		strs := make([]string, len(ids))
		for i, v := range ids {
			strs[i] = strconv.FormatInt(v, 10)
		}
		if _, err := fmt.Fprintf(w, "%s|%s|%s\n", id, strings.Join(strs, " "), text); err != nil {
			return n, missing, fmt.Errorf("writing the ids file: %w", err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, missing, fmt.Errorf("reading the metadata: %w", err)
	}
	if err := w.Flush(); err != nil {
		return n, missing, fmt.Errorf("writing the ids file: %w", err)
	}
	return n, missing, nil
}

// readIDMap reads a phoneme_id_map, either bare or inside a Piper voice config.
func readIDMap(path string) (map[string][]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the phoneme id map: %w", err)
	}
	var cfg struct {
		PhonemeIDMap map[string][]int64 `json:"phoneme_id_map"`
	}
	if err := json.Unmarshal(data, &cfg); err == nil && len(cfg.PhonemeIDMap) > 0 {
		return cfg.PhonemeIDMap, nil
	}
	var bare map[string][]int64
	if err := json.Unmarshal(data, &bare); err != nil {
		return nil, fmt.Errorf("parsing the phoneme id map %s: %w", path, err)
	}
	if len(bare) == 0 {
		return nil, fmt.Errorf("the phoneme id map %s is empty", path)
	}
	return bare, nil
}
