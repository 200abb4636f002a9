package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ttsgen/ttsgen/internal/suggest"
)

// Limits on the accepted values. They exist to catch typos ("length_scale":
// 100 instead of 1.00) before hours are spent synthesising nonsense.
const (
	MaxLengthScale = 20 // length_scale must be in (0, MaxLengthScale]
	MaxNoise       = 10 // noise_scale and noise_w must be in [0, MaxNoise]
	// maxIDFileName leaves room for ".wav" within the common 255-byte limit
	// on a file name.
	maxIDFileName = 250
	// reservedPrefix starts the names of the results package's temporary
	// and lock files; an output named like that would be deleted on resume.
	reservedPrefix = ".ttsgen-"
)

var knownFields = []string{"id", "text", "out", "format", "voice", "speaker", "length_scale", "noise_scale", "noise_w"}

// place is where an id or output path was first used, for messages.
type place struct {
	source string
	line   int
}

// describe says where p is, relative to the file being read now.
func (p place) describe(current string) string {
	switch {
	case p.source == current && p.line > 0:
		return fmt.Sprintf("on line %d", p.line)
	case p.line > 0:
		return fmt.Sprintf("in %s line %d", p.source, p.line)
	default:
		return "by " + p.source
	}
}

// runState holds what must be unique across all inputs of one Scan.
type runState struct {
	maxLine int // MaxLineBytes; smaller in tests
	ids     map[string]place
}

func newRunState() *runState {
	return &runState{maxLine: MaxLineBytes, ids: map[string]place{}}
}

// problems collects everything wrong with one item, so that the user can fix
// a line in one go rather than one complaint per run.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

type field struct {
	key string
	val json.RawMessage
}

// parseLine turns line n of a manifest into an Item. It never fails: every
// problem ends up in the Item's Err.
func (s *runState) parseLine(source string, n int, raw []byte, tooLong bool) Item {
	it := Item{Source: source, Line: n}
	fail := func(format string, args ...any) Item {
		it.Err = fmt.Errorf(format, args...)
		return it
	}
	if tooLong {
		return fail("line is longer than %d bytes", s.maxLine)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fail("empty line")
	}
	if !utf8.Valid(raw) {
		return fail("invalid UTF-8 at byte offset %d", invalidUTF8Offset(raw))
	}
	var probe json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		if t := string(bytes.TrimSpace(raw)); t == "[" || t == "{" {
			return fail("invalid JSON: %v (each line must hold one whole JSON object; a pretty-printed .json file is not a manifest)", err)
		}
		return fail("invalid JSON: %v", err)
	}
	if k := jsonKind(probe); k != "object" {
		return fail(`expected a JSON object like {"text": "..."}, got %s`, withArticle(k))
	}
	fields, err := objectFields(probe)
	if err != nil {
		return fail("invalid JSON: %v", err)
	}

	var bad problems
	id, idUsable := stem(source)+"-"+strconv.Itoa(n), true
	textGiven := false
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.key] {
			bad.add("field %q appears more than once", f.key)
			continue
		}
		seen[f.key] = true
		switch f.key {
		case "id":
			if v, ok := optionalString(f, &bad); ok {
				id = v
				if v == "" {
					bad.add(`"id" is empty`)
					idUsable = false
				}
			} else if jsonKind(f.val) != "null" {
				idUsable = false
			}
		case "text":
			textGiven = true
			if k := jsonKind(f.val); k != "string" {
				bad.add(`"text" must be a string, got %s`, k)
				break
			}
			it.Text = decodeString(f.val)
			if strings.TrimSpace(it.Text) == "" {
				bad.add(`"text" is empty`)
			}
		case "out":
			if v, ok := optionalString(f, &bad); ok && v != "" {
				it.Out = v
			}
		case "format":
			if v, ok := optionalString(f, &bad); ok {
				it.Format = strings.ToLower(strings.TrimSpace(v)) // checked where the formats are known
			}
		case "voice":
			if v, ok := optionalString(f, &bad); ok {
				it.Voice = v
			}
		case "speaker":
			it.Speaker = parseSpeaker(f, &bad)
		case "length_scale":
			it.LengthScale = parseScale(f, &bad, false, MaxLengthScale)
		case "noise_scale":
			it.NoiseScale = parseScale(f, &bad, true, MaxNoise)
		case "noise_w":
			it.NoiseW = parseScale(f, &bad, true, MaxNoise)
		default:
			w := fmt.Sprintf("unknown field %q ignored", f.key)
			if guess := closestField(f.key); guess != "" {
				w += fmt.Sprintf(" (did you mean %q?)", guess)
			}
			it.Warnings = append(it.Warnings, w)
		}
	}
	if !textGiven {
		bad.add(`"text" is missing`)
	}
	if it.Out != "" {
		cleaned, problem := checkOut(it.Out)
		if problem != "" {
			bad.add("%s", problem)
		} else {
			it.Out = cleaned
		}
	} else if idUsable {
		if problem := idFileNameProblem(id, `set "out"`); problem != "" {
			bad.add("%s", problem)
		}
	}
	if idUsable {
		it.ID = s.claim(&bad, id, place{source, n}, source)
	}
	if len(bad) > 0 {
		it.Err = errors.New(strings.Join(bad, "; "))
	}
	return it
}

// stem is an input's file name without its extension, which starts its items' default ids; standard input's is
// "stdin".
func stem(source string) string {
	if source == stdinName {
		return "stdin"
	}
	base := filepath.Base(source)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// claim registers id for the run. It returns the id the item keeps: "" when an earlier item owns it, so that no
// two yielded items ever share an id. Items with other problems still claim their id, so fixing a field later does
// not change which line owns it. (Two items' output files are compared by the batch, which knows their formats.)
func (s *runState) claim(bad *problems, id string, at place, current string) string {
	if first, taken := s.ids[id]; taken {
		bad.add("duplicate id %q (first used %s)", id, first.describe(current))
		return ""
	}
	s.ids[id] = at
	return id
}

// objectFields lists the members of a JSON object (already known to be valid)
// in order, keeping duplicates so that they can be reported.
func objectFields(obj json.RawMessage) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %v, not a string", tok)
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		fields = append(fields, field{key, val})
	}
	return fields, nil
}

// jsonKind names the type of a valid JSON value, as a user would say it.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

func withArticle(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "null", "nothing":
		return kind
	default:
		return "a " + kind
	}
}

func decodeString(v json.RawMessage) string {
	var s string
	_ = json.Unmarshal(v, &s) // cannot fail: v is a valid JSON string
	return s
}

// optionalString decodes a string field; null counts as absent (ok=false, no
// problem), any other type is a problem.
func optionalString(f field, bad *problems) (string, bool) {
	switch k := jsonKind(f.val); k {
	case "string":
		return decodeString(f.val), true
	case "null":
		return "", false
	default:
		bad.add("%q must be a string, got %s", f.key, k)
		return "", false
	}
}

func parseSpeaker(f field, bad *problems) string {
	switch k := jsonKind(f.val); k {
	case "string":
		return decodeString(f.val)
	case "null":
		return ""
	case "number":
		n, err := strconv.ParseInt(string(f.val), 10, 64)
		if err != nil || n < 0 {
			bad.add(`"speaker" must be a whole number >= 0 or a name, got %s`, f.val)
			return ""
		}
		return strconv.FormatInt(n, 10)
	default:
		bad.add(`"speaker" must be a number or a name, got %s`, k)
		return ""
	}
}

// parseScale decodes a scale in [0, max] (zeroAllowed) or (0, max]. JSON has
// no NaN or Infinity literals, but 1e999 parses as +Inf and 1e-60 rounds to
// 0 as a float32: both are caught here.
func parseScale(f field, bad *problems, zeroAllowed bool, max float64) *float32 {
	switch k := jsonKind(f.val); k {
	case "null":
		return nil
	case "number":
	default:
		bad.add("%q must be a number, got %s", f.key, k)
		return nil
	}
	v, err := strconv.ParseFloat(string(f.val), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		bad.add("%q must be a finite number, got %s", f.key, f.val)
		return nil
	}
	v32 := float32(v)
	inRange := v <= max && (v > 0 && v32 > 0 || zeroAllowed && v >= 0)
	if !inRange {
		interval := fmt.Sprintf("(0, %g]", max)
		if zeroAllowed {
			interval = fmt.Sprintf("[0, %g]", max)
		}
		bad.add("%q must be in %s, got %s", f.key, interval, f.val)
		return nil
	}
	return &v32
}

// checkOut validates a requested output path ("/"-separated, relative to the
// output dir) and returns it cleaned, or a problem.
func checkOut(out string) (cleaned, problem string) {
	if strings.ContainsFunc(out, unicode.IsControl) {
		return "", fmt.Sprintf(`"out" must not contain control characters, got %q`, out)
	}
	if strings.HasPrefix(out, "/") || filepath.IsAbs(out) {
		return "", fmt.Sprintf(`"out" must be a relative path, got %q`, out)
	}
	for _, part := range strings.Split(out, "/") {
		if part == ".." {
			return "", fmt.Sprintf(`"out" must not contain "..", got %q`, out)
		}
		if strings.HasPrefix(part, reservedPrefix) {
			return "", fmt.Sprintf(`"out" must not use the reserved prefix %q, got %q`, reservedPrefix, out)
		}
	}
	cleaned = path.Clean(out)
	ext := path.Ext(cleaned)
	if ext == "" || ext == "." {
		return "", fmt.Sprintf(`"out" must end in an audio extension such as .wav or .flac, got %q`, out)
	}
	if path.Base(cleaned) == ext {
		return "", fmt.Sprintf(`"out" has no file name before %s, got %q`, ext, out)
	}
	return cleaned, ""
}

// idFileNameProblem says why id cannot be used as the file name "<id>.wav",
// or "" if it can; fix says what the user can do about it.
func idFileNameProblem(id, fix string) string {
	why := ""
	switch {
	case strings.ContainsAny(id, `/\`):
		why = "it contains a path separator"
	case strings.ContainsFunc(id, unicode.IsControl):
		why = "it contains control characters"
	case id == "." || id == "..":
		why = "it is " + id
	case strings.HasPrefix(id, reservedPrefix):
		why = fmt.Sprintf("it starts with the reserved prefix %q", reservedPrefix)
	case len(id) > maxIDFileName:
		why = fmt.Sprintf("it is longer than %d bytes", maxIDFileName)
	default:
		return ""
	}
	return fmt.Sprintf(`id %q cannot be a file name (%s); %s`, id, why, fix)
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// closestField suggests the known field a misspelt key probably meant.
func closestField(key string) string { return suggest.Closest(key, knownFields) }
