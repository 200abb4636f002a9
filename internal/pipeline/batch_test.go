package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// gatedEngine holds every sentence until open is closed, counting those it holds, and answers with 100 samples.
type gatedEngine struct {
	queue int
	open  chan struct{}

	mu            sync.Mutex
	held, maxHeld int
}

func (g *gatedEngine) QueueSize() int { return g.queue }

func (g *gatedEngine) Submit(ctx context.Context, _ *engine.Model, _ engine.Request) <-chan engine.Result {
	g.mu.Lock()
	g.held++
	g.maxHeld = max(g.maxHeld, g.held)
	g.mu.Unlock()
	out := make(chan engine.Result, 1)
	go func() {
		select {
		case <-g.open:
			out <- engine.Result{Audio: make([]float32, 100)}
		case <-ctx.Done():
			out <- engine.Result{Err: ctx.Err()}
		}
		g.mu.Lock()
		g.held--
		g.mu.Unlock()
	}()
	return out
}

func (g *gatedEngine) holding() (now, most int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held, g.maxHeld
}

// gatedBatch runs a batch of the file name with content through eng in the background, with the tiny voice's
// config and espeak-ng; wait returns its summary once it finishes.
func gatedBatch(t *testing.T, eng *gatedEngine, prog Progress, name, content string) (wait func() Summary) {
	t.Helper()
	frontend, cfg, _ := testFrontend(t, true)
	dir := t.TempDir()
	input := filepath.Join(dir, name)
	if err := os.WriteFile(input, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := results.Open(filepath.Join(dir, "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	voice := testVoice()
	voice.Voice.Config = cfg
	b := &Batch{Engine: eng, Frontend: frontend, LoadVoice: func(string) (*LoadedVoice, error) { return voice, nil },
		FindVoice: func(string) (*voices.Voice, error) { return voice.Voice, nil }, Out: out, Progress: prog}
	done := make(chan error, 1)
	var sum Summary
	go func() {
		var err error
		sum, err = b.Run(context.Background(), []string{input})
		done <- err
	}()
	return func() Summary {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return sum
	}
}

// A prompt set of one short sentence per item keeps as many sentences in the engine as its queue holds (more than
// MinItemConcurrency items), never more, and every item is written once the engine answers.
func TestBatchFillsTheEngineQueueWithOneSentenceItems(t *testing.T) {
	var lines strings.Builder
	const items = 300
	for i := range items {
		fmt.Fprintf(&lines, "{\"id\": \"p%d\", \"text\": \"Press %d for sales.\"}\n", i, i)
	}
	eng := &gatedEngine{queue: 200, open: make(chan struct{})}
	wait := gatedBatch(t, eng, nil, "prompts.jsonl", lines.String())
	waitFor(t, "200 sentences in the engine", func() bool { now, _ := eng.holding(); return now >= 200 })
	close(eng.open)
	sum := wait()
	if _, most := eng.holding(); most != 200 {
		t.Errorf("at most %d sentences were in the engine at once; want 200, its queue size", most)
	}
	if sum.OK != items || sum.Sentences != items {
		t.Errorf("summary %+v; want %d items and sentences ok", sum, items)
	}
}

// countingProgress adds up what a batch reports.
type countingProgress struct {
	mu              sync.Mutex
	planned, spoken int
	reading         []bool // each Reading call's argument
}

func (p *countingProgress) Planned(delta int)     { p.mu.Lock(); p.planned += delta; p.mu.Unlock() }
func (p *countingProgress) Sentence(SentenceDone) { p.mu.Lock(); p.spoken++; p.mu.Unlock() }
func (p *countingProgress) Reading(open bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reading = append(p.reading, open)
}
func (p *countingProgress) Item(results.Row, bool) {}
func (p *countingProgress) counts() (planned, spoken int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.planned, p.spoken
}

// While a book is spoken the progress total is what the frontend will give (here a sentence too long to speak
// whole, in pieces), not the quick first pass's count, and at the end it is what was spoken.
func TestBatchProgressTotalWhileABookIsSpoken(t *testing.T) {
	long := strings.Repeat("and the committee went on to hear the witnesses of the day ", 20) + "until evening."
	book := "A short opening. " + long + " The end."
	frontend, _, _ := testFrontend(t, true)
	quick, closer := estimateText(book), frontend.Split(book).Estimate()
	if closer <= quick {
		t.Fatalf("first pass %d sentences, frontend %d: the test needs a text the frontend splits further", quick, closer)
	}
	eng := &gatedEngine{queue: 64, open: make(chan struct{})}
	prog := &countingProgress{}
	wait := gatedBatch(t, eng, prog, "book.txt", book)
	waitFor(t, "the book's first sentence in the engine", func() bool { now, _ := eng.holding(); return now >= 1 })
	if planned, _ := prog.counts(); planned != closer {
		t.Errorf("progress total %d while the book is spoken; want %d, the frontend's estimate", planned, closer)
	}
	close(eng.open)
	sum := wait()
	if planned, spoken := prog.counts(); planned != spoken || spoken != sum.Sentences || spoken < closer {
		t.Errorf("progress total %d, %d sentences reported, %d in the summary; want all equal (>= %d)", planned, spoken,
			sum.Sentences, closer)
	}
}

// A row's "text_sha256" is the first 128 bits of the SHA-256 of the item's text, in hex: of a manifest line's "text"
// as JSON decodes it, and of a .txt file's contents without a leading byte-order mark. (A full SHA-256 would be 64
// characters; the name stays so that rows written before still compare.)
func TestBatchRowTextSHA256IsTheFirst128BitsOfTheTextsSHA256(t *testing.T) {
	r := newRig(t)
	const said = "Dr. Smith paid $5. Café \"quoted\"."
	m := r.write("m.jsonl", `{"id": "line", "text": "Dr. Smith paid $5. Caf\u00e9 \"quoted\"."}`+"\n")
	doc := r.write("doc.txt", "\uFEFF"+said+"\n")
	r.run(false, nil, m, doc)
	rows := r.rows()
	truncated := func(text string) string {
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:])[:32]
	}
	for id, text := range map[string]string{"line": said, "doc": said + "\n"} {
		got := rows[id].Settings["text_sha256"]
		if got != truncated(text) || len(got) != 32 {
			t.Errorf("item %s: text_sha256 %q; want %q, the first 32 hex characters of the SHA-256 of %q", id, got,
				truncated(text), text)
		}
	}
	// printf %s 'Dr. Smith paid $5.' | sha256sum: 967ed267027a5543a6058a16c75963f7d724960922eb394576af4513ab0564a6
	if got := textDigest("Dr. Smith paid $5."); got != "967ed267027a5543a6058a16c75963f7" {
		t.Errorf("textDigest(%q) = %q", "Dr. Smith paid $5.", got)
	}
}
