package cmd

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
)

// deterministic makes a voice's output repeatable (no noise drawn), so that files in different formats can be
// compared sample by sample.
var deterministic = []string{"--voice", tinyVoice, "--noise-scale", "0", "--noise-w", "0"}

// synth -o x.flac|x.opus|x.mp3|x.aac and --format pcm -o -: the lossless ones give the WAV's samples exactly
// (as ffmpeg decodes them), the lossy ones its length to 60 ms (as ffprobe reads it).
func TestSynthFormatsAgainstTheWAV(t *testing.T) {
	isolate(t)
	needORT(t)
	dir := t.TempDir()
	text := "One sentence here. And a second, a little longer, after the silence."
	synth := func(args ...string) runResult {
		t.Helper()
		r := run(t, "", append(append([]string{"synth", text}, deterministic...), args...)...)
		if r.code != 0 {
			t.Fatalf("synth %v: exit %d: %s", args, r.code, r.errOut)
		}
		return r
	}
	wavPath := filepath.Join(dir, "x.wav")
	synth("-o", wavPath)
	wav, rate := readWAVFile(t, wavPath)
	seconds := float64(len(wav)) / float64(rate)

	for _, name := range []string{"x.flac", "x.opus", "x.mp3", "x.aac"} {
		path := filepath.Join(dir, name)
		synth("-o", path)
		got, gotRate := decodetest.Decode(t, path)
		if name == "x.flac" {
			if gotRate != rate || !slices.Equal(got, wav) {
				t.Errorf("%s decodes to %d samples at %d Hz, not the WAV's %d", name, len(got), gotRate, len(wav))
			}
			continue
		}
		if d := float64(len(got))/float64(gotRate) - seconds; math.Abs(d) > 0.060 {
			t.Errorf("%s decodes to %.3f s, the WAV is %.3f s", name, float64(len(got))/float64(gotRate), seconds)
		}
		if name != "x.aac" { // ADTS has no length: ffprobe estimates it from the bitrate
			if got := decodetest.Seconds(t, path); math.Abs(got-seconds) > 0.060 {
				t.Errorf("ffprobe gives %s %.3f s, the WAV is %.3f s", name, got, seconds)
			}
		}
	}

	r := synth("--format", "pcm", "-o", "-")
	raw := filepath.Join(dir, "x.raw")
	if err := os.WriteFile(raw, []byte(r.out), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := decodetest.DecodeRaw(t, raw, rate); !slices.Equal(got, wav) {
		t.Errorf("--format pcm -o - gave %d samples, not the WAV's %d", len(got), len(wav))
	}

	// Opus into a pipe: the stream a player got decodes whole, its last page there.
	r = synth("--format", "opus", "-o", "-")
	streamed := filepath.Join(dir, "streamed.opus")
	if err := os.WriteFile(streamed, []byte(r.out), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, gotRate := decodetest.Decode(t, streamed); math.Abs(float64(len(got))/float64(gotRate)-seconds) > 0.060 {
		t.Errorf("opus through standard output decodes to %.3f s, the WAV is %.3f s", float64(len(got))/float64(gotRate), seconds)
	}

	// Resampled on the way out.
	at16k := filepath.Join(dir, "x16.flac")
	synth("--sample-rate", "16000", "-o", at16k)
	if got, gotRate := decodetest.Decode(t, at16k); gotRate != 16000 || math.Abs(float64(len(got))/16000-seconds) > 0.001 {
		t.Errorf("--sample-rate 16000: %d samples at %d Hz for %.3f s", len(got), gotRate, seconds)
	}
}

func TestSynthFormatUsageErrors(t *testing.T) {
	isolate(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "flac", "-o", "x.mp3"}, "--format flac, but -o x.mp3 names a mp3 file"},
		{[]string{"--format", "vorbis", "-o", "x.ogg"}, `unknown audio format "vorbis"`},
		{[]string{"--bitrate", "1", "-o", "x.opus"}, "--bitrate 1 is outside [6, 320] kbit/s"},
		{[]string{"--sample-rate", "100", "-o", "x.wav"}, "--sample-rate 100 is outside"},
		{[]string{"--volume", "0", "-o", "x.wav"}, "--volume 0 is outside (0, 100]"},
	} {
		r := run(t, "", append([]string{"synth", "hi"}, tt.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.errOut, ExitUsage, tt.want)
		}
	}
}

// batch --format flac: items in the batch's format unless their line says another (by "format" or by the
// extension of "out"), rows that say the format and the encoded size, a re-run that skips what is done and
// redoes what a new --format changes.
func TestBatchFormats(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	manifest := writeFile(t, filepath.Join(dir, "in.jsonl"), strings.Join([]string{
		`{"id": "plain", "text": "In the batch's format."}`,
		`{"id": "own", "text": "In its own format.", "format": "opus"}`,
		`{"id": "byext", "text": "Named by its extension.", "out": "sub/byext.mp3"}`,
		`{"id": "clash", "text": "A format against its extension.", "out": "clash.wav", "format": "flac"}`,
		`{"id": "unknown", "text": "An extension of no format.", "out": "x.audio"}`,
	}, "\n")+"\n")
	out := filepath.Join(dir, "out")
	batch := func(args ...string) runResult {
		return run(t, "", append(append([]string{"batch", manifest, "-o", out}, deterministic...), args...)...)
	}
	r := batch("--format", "flac")
	if r.code != ExitFailure {
		t.Fatalf("exit %d, want 1 for the two bad lines: %s", r.code, r.errOut)
	}
	want := map[string]struct{ out, format string }{
		"plain": {"plain.flac", "flac"}, "own": {"own.opus", "opus"}, "byext": {"sub/byext.mp3", "mp3"},
	}
	rows := lastRows(t, out)
	for id, w := range want {
		row, ok := rows[id]
		if !ok || row.Status != "ok" || row.Out != w.out || row.Format != w.format {
			t.Errorf("item %s: row %+v, want ok, out %s, format %s", id, row, w.out, w.format)
			continue
		}
		info, err := os.Stat(filepath.Join(out, w.out))
		if err != nil || info.Size() != row.Bytes {
			t.Errorf("item %s: %s is %v bytes (%v), the row says %d", id, w.out, info, err, row.Bytes)
		}
		if got := decodetest.Seconds(t, filepath.Join(out, w.out)); math.Abs(got-row.AudioSeconds) > 0.060 {
			t.Errorf("item %s: ffprobe gives %.3f s, the row %.3f s", id, got, row.AudioSeconds)
		}
	}
	if row := rows["clash"]; row.Status != "error" || !strings.Contains(row.Error, `"out" "clash.wav" is a wav file, but "format" is flac`) {
		t.Errorf("format against extension: row %+v", row)
	}
	if row := rows["unknown"]; row.Status != "error" || !strings.Contains(row.Error, "extension of no audio format") {
		t.Errorf("unknown extension: row %+v", row)
	}

	// The same again: nothing to do but the two bad lines.
	if r := batch("--format", "flac"); !strings.Contains(r.errOut, "3 skipped") {
		t.Errorf("re-run: %s", r.errOut)
	}
	// Another default format redoes only the item that takes it.
	r = batch("--format", "wav")
	if !strings.Contains(r.errOut, "1 ok, 2 failed, 2 skipped") {
		t.Errorf("re-run in wav: %s", r.errOut)
	}
	if row := lastRows(t, out)["plain"]; row.Out != "plain.wav" || row.Format != "wav" {
		t.Errorf("after --format wav, plain's row is %+v", row)
	}
	samples, _ := readWAVFile(t, filepath.Join(out, "plain.wav"))
	flac, _ := decodetest.Decode(t, filepath.Join(out, "plain.flac"))
	if !slices.Equal(samples, flac) {
		t.Errorf("the batch's FLAC (%d samples) and WAV (%d) of one item differ", len(flac), len(samples))
	}
}

// By default a sentence comes out at speech level (RMS -20 dBFS, peaks at most -3 dBFS); --volume scales the
// normalised samples; --peak-normalize (Piper's) and --no-normalize-audio (the model's level) are, for one sentence,
// the default audio times one factor each.
func TestSynthLevels(t *testing.T) {
	isolate(t)
	needORT(t)
	dir := t.TempDir()
	synth := func(name string, args ...string) []int16 {
		t.Helper()
		path := filepath.Join(dir, name)
		r := run(t, "", append(append([]string{"synth", "Just the one sentence.", "-o", path}, deterministic...), args...)...)
		if r.code != 0 {
			t.Fatalf("synth %v: exit %d: %s", args, r.code, r.errOut)
		}
		samples, _ := readWAVFile(t, path)
		return samples
	}
	peak := func(s []int16) float64 {
		p := 0
		for _, v := range s {
			p = max(p, int(math.Abs(float64(v))))
		}
		return float64(p)
	}
	dBFS := func(v float64) float64 { return 20 * math.Log10(v/32767) }
	normal := synth("normal.wav")
	var energy float64
	for _, v := range normal {
		energy += float64(v) * float64(v)
	}
	rms := dBFS(math.Sqrt(energy / float64(len(normal))))
	if math.Abs(rms+20) > 0.1 && math.Abs(dBFS(peak(normal))+3) > 0.1 || dBFS(peak(normal)) > -2.9 {
		t.Fatalf("default level: RMS %.2f dBFS, peak %.2f dBFS; want RMS -20 (or the peak held at -3)", rms, dBFS(peak(normal)))
	}
	if r := run(t, "", "synth", "x", "-o", filepath.Join(dir, "x.wav"), "--peak-normalize", "--no-normalize-audio"); r.code != 2 ||
		!strings.Contains(r.errOut, "contradict") {
		t.Errorf("--peak-normalize with --no-normalize-audio: exit %d, %q; want a usage error", r.code, r.errOut)
	}
	half := synth("half.wav", "--volume", "0.5")
	for _, tt := range []struct {
		flag    string
		samples []int16
		wantMax float64 // its peak, if known
	}{
		{"--peak-normalize", synth("peak.wav", "--peak-normalize"), 32767},
		{"--no-normalize-audio", synth("model.wav", "--no-normalize-audio"), 0},
	} {
		gain := peak(tt.samples) / peak(normal)
		if len(tt.samples) != len(normal) || tt.wantMax != 0 && peak(tt.samples) < tt.wantMax-1 {
			t.Fatalf("%s: peak %.0f over %d samples (default: %.0f over %d)", tt.flag, peak(tt.samples), len(tt.samples), peak(normal), len(normal))
		}
		for i := range normal {
			if math.Abs(float64(tt.samples[i])-float64(normal[i])*gain) > 1+gain { // both sides were truncated to integers
				t.Fatalf("%s: sample %d is %d; the default's %d times %.3f", tt.flag, i, tt.samples[i], normal[i], gain)
			}
		}
	}
	for i := range normal {
		if math.Abs(float64(half[i])-float64(normal[i])/2) > 1 {
			t.Fatalf("sample %d: %d at the default level, %d at half volume", i, normal[i], half[i])
		}
	}
}
