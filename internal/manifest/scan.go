package manifest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	// MaxLineBytes is the longest manifest line accepted; a longer line is an
	// error item and reading goes on with the next line. It bounds the memory
	// Scan needs regardless of the manifest's size.
	MaxLineBytes = 1 << 20
	// MaxDocumentBytes is the largest .txt file accepted as one item.
	MaxDocumentBytes = 64 << 20
)

// stdinName is the input that means standard input, read as a JSONL manifest.
const stdinName = "-"

type inputKind int

const (
	kindManifest inputKind = iota
	kindDocument
	kindDirectory
)

// Scan reads each input in order and calls yield for every item, bad ones
// included (with Err set), in input order and line order. It stops early only
// when ctx is cancelled (returning ctx.Err()), when yield returns an error
// (returned unchanged), or when an input cannot be opened or read at all.
// Before yielding anything it checks that every input exists and is a
// manifest (.jsonl, .json, .ndjson), a .txt file or a directory.
//
// "-" is stdin, read as a JSONL manifest. It and inputs that are not regular
// files (a FIFO, a device: see IsStream) are read as streams, once, and a
// cancelled ctx ends the scan even while it waits for a writer or for more
// input; a stream whose name has no known extension is read as a manifest.
//
// Ids must be unique across all inputs of one call; see the package
// documentation.
func Scan(ctx context.Context, inputs []string, stdin io.Reader, yield func(Item) error) error {
	if len(inputs) == 0 {
		return errors.New("no inputs given")
	}
	kinds, err := classifyAll(inputs)
	if err != nil {
		return err
	}
	run := newRunState()
	for i, in := range inputs {
		var err error
		switch kinds[i] {
		case kindManifest:
			err = run.scanManifestFile(ctx, in, stdin, yield)
		case kindDocument:
			err = run.scanDocument(ctx, in, yield, true)
		case kindDirectory:
			err = run.scanDirectory(ctx, in, yield)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckInputs says what Scan would refuse inputs for before reading any: one that is missing or of an unknown kind,
// or standard input given twice. A command calls it before it creates anything.
func CheckInputs(inputs []string) error {
	_, err := classifyAll(inputs)
	return err
}

func classifyAll(inputs []string) ([]inputKind, error) {
	kinds := make([]inputKind, len(inputs))
	stdinSeen := false
	for i, in := range inputs {
		if in == stdinName {
			if stdinSeen {
				return nil, errors.New(`standard input ("-") is given twice`)
			}
			stdinSeen = true
		}
		k, err := classify(in)
		if err != nil {
			return nil, err
		}
		kinds[i] = k
	}
	return kinds, nil
}

// IsStream reports whether input is read as a stream, which can be read only once: "-" (stdin), a FIFO, a device.
func IsStream(input string) bool {
	if input == stdinName {
		return true
	}
	info, err := os.Stat(input)
	return err == nil && isStream(info)
}

func isStream(info fs.FileInfo) bool { return !info.Mode().IsRegular() && !info.IsDir() }

func classify(input string) (inputKind, error) {
	if input == stdinName {
		return kindManifest, nil
	}
	info, err := os.Stat(input)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) { // the path is said once, first
			err = pe.Err
		}
		return 0, fmt.Errorf("input %s: %w", input, err)
	}
	if info.IsDir() {
		return kindDirectory, nil
	}
	switch strings.ToLower(filepath.Ext(input)) {
	case ".jsonl", ".json", ".ndjson":
		return kindManifest, nil
	case ".txt":
		return kindDocument, nil
	}
	if isStream(info) { // <(generate) is /dev/fd/63
		return kindManifest, nil
	}
	return 0, fmt.Errorf("input %s: unsupported kind of file (want .jsonl, .json, .ndjson, .txt or a directory)", input)
}

func (s *runState) scanManifestFile(ctx context.Context, name string, stdin io.Reader, yield func(Item) error) error {
	f, err := OpenInput(ctx, name, stdin)
	if err != nil {
		return fmt.Errorf("opening manifest: %w", err)
	}
	defer f.Close()
	return s.scanManifest(ctx, name, f, yield)
}

// scanManifest yields one item per line of r, which is read as the manifest
// called name.
func (s *runState) scanManifest(ctx context.Context, name string, r io.Reader, yield func(Item) error) error {
	lines := newLineReader(NewTextReader(r), s.maxLine)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, tooLong, err := lines.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("reading %s after line %d: %w", name, n-1, err)
		}
		if err := yield(s.parseLine(name, n, raw, tooLong)); err != nil {
			return err
		}
	}
}

// scanDirectory yields the .txt files directly inside dir, sorted by name. A
// directory without any is an error item rather than a silent no-op.
func (s *runState) scanDirectory(ctx context.Context, dir string, yield func(Item) error) error {
	entries, err := os.ReadDir(dir) // sorted by file name
	if err != nil {
		return fmt.Errorf("listing input directory: %w", err)
	}
	var docs []string
	for _, e := range entries {
		if !strings.EqualFold(filepath.Ext(e.Name()), ".txt") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if info, err := os.Stat(p); err == nil && info.IsDir() { // follows symlinks
			continue
		}
		docs = append(docs, p)
	}
	sort.Strings(docs)
	if len(docs) == 0 {
		return yield(Item{Source: dir, Err: fmt.Errorf("directory %s has no .txt files", dir)})
	}
	for _, p := range docs {
		if err := s.scanDocument(ctx, p, yield, false); err != nil {
			return err
		}
	}
	return nil
}

// scanDocument yields a whole .txt file as one item. When the file was named
// on the command line, failing to open it stops the scan; a file found in a
// directory becomes an error item instead, so one unreadable file does not
// stop a corpus.
func (s *runState) scanDocument(ctx context.Context, name string, yield func(Item) error, named bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := readDocument(ctx, name)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil && named {
		return err
	}
	it := s.parseDocument(name, data, err)
	return yield(it)
}

func readDocument(ctx context.Context, name string) ([]byte, error) {
	f, err := OpenInput(ctx, name, nil)
	if err != nil {
		return nil, fmt.Errorf("opening text file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(NewTextReader(f), MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return data, nil
}

// parseDocument turns a whole text file into an item whose id is the file
// name without its extension.
func (s *runState) parseDocument(name string, data []byte, readErr error) Item {
	it := Item{Source: name}
	var bad problems
	id := stem(name)
	var notText error
	if readErr == nil && len(data) <= MaxDocumentBytes {
		notText = CheckText(data) // a NUL (a binary file) or a byte that is not UTF-8, by line
	}
	switch {
	case readErr != nil:
		bad.add("%v", readErr)
	case len(data) > MaxDocumentBytes:
		bad.add("document is larger than %d MiB", MaxDocumentBytes>>20)
	case notText != nil:
		bad.add("%v", notText)
	default:
		it.Text = string(data)
		if strings.TrimSpace(it.Text) == "" {
			bad.add("document is empty")
		}
	}
	problem := idFileNameProblem(id, "rename the file")
	if problem != "" {
		bad.add("%s", problem)
	}
	it.ID = s.claim(&bad, id, place{name, 0}, name)
	if len(bad) > 0 {
		it.Err = errors.New(strings.Join(bad, "; "))
	}
	return it
}
