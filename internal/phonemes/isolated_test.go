package phonemes

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets this test binary be the child of the Isolated phonemizers its tests start, with the
// crash and hang hooks enabled.
func TestMain(m *testing.M) {
	ServeChildIfAsked()
	os.Setenv(testHooksEnv, "1")
	os.Exit(m.Run())
}

func newTestIsolated(t testing.TB, timeout time.Duration) *Isolated {
	t.Helper()
	iso, err := NewIsolated("", timeout)
	if err != nil {
		t.Fatalf("NewIsolated: %v", err)
	}
	t.Cleanup(func() { iso.Close() })
	return iso
}

// childPID is the process id of the running child, or 0 when none runs.
func (iso *Isolated) childPID() int {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if iso.child == nil {
		return 0
	}
	return iso.child.cmd.Process.Pid
}

// isolatedTexts are compared between the child and this process.
var isolatedTexts = []struct{ text, voice string }{
	{"This is a test.", "en-us"},
	{"Hello, world. How are you?", "en-us"},
	{"Wait... what?", "en-us"},
	{`He said "hi." Then left.`, "en-us"},
	{"I have 42 apples and 3.5 pears.", "en-us"},
	{"Le weekend.", "fr"},
	{"ich", "de"},
	{"", "en-us"},
	{"...", "en-us"},
	{"Tab\there, bell\a and invalid \xff bytes..", "en-us"},
	{"Emoji 😀 and 漢字 mixed.", "en-us"},
}

func TestIsolatedMatchesInProcess(t *testing.T) {
	esp := newTestEspeak(t)
	iso := newTestIsolated(t, 0)
	for _, tt := range isolatedTexts {
		want, wantErr := esp.Phonemize(tt.text, tt.voice)
		got, err := iso.Phonemize(tt.text, tt.voice)
		if err != nil || wantErr != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Phonemize(%q, %q) = %q, %v; in process %q, %v", tt.text, tt.voice, got, err, want, wantErr)
		}
		wantSentences, wantErr := esp.Sentences(tt.text, tt.voice)
		gotSentences, err := iso.Sentences(tt.text, tt.voice)
		if err != nil || wantErr != nil || !reflect.DeepEqual(gotSentences, wantSentences) {
			t.Errorf("Sentences(%q, %q) = %q, %v; in process %q, %v", tt.text, tt.voice, gotSentences, err,
				wantSentences, wantErr)
		}
	}
}

// An error from espeak-ng (not a crash) comes back as it is, and the child keeps running.
// TestIsolatedReplacesChildAfterTextsPerChild: after textsPerChild texts a fresh child takes over, and the
// answers stay those of the library in this process.
func TestIsolatedReplacesChildAfterTextsPerChild(t *testing.T) {
	esp := newTestEspeak(t)
	iso := newTestIsolated(t, 0)
	iso.textsPerChild = 3
	pids := map[int]bool{}
	for i := range 7 {
		tt := isolatedTexts[i%5]
		want, _ := esp.Phonemize(tt.text, tt.voice)
		got, err := iso.Phonemize(tt.text, tt.voice)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("text %d: %q, %v; in process %q", i, got, err, want)
		}
		pids[iso.childPID()] = true
	}
	delete(pids, 0) // no child runs between a replacement and the next text
	if len(pids) != 3 {
		t.Errorf("7 texts ran in %d children, want 3 (a fresh one after every 3 texts)", len(pids))
	}
}

func TestIsolatedUnknownVoice(t *testing.T) {
	iso := newTestIsolated(t, 0)
	pid := iso.childPID()
	_, err := iso.Phonemize("Hello.", "xx-nonexistent")
	if err == nil || !strings.Contains(err.Error(), `set espeak-ng voice "xx-nonexistent"`) {
		t.Fatalf("unknown voice: err = %v, want the voice error from espeak-ng", err)
	}
	if got, err := iso.Phonemize("Hello.", "en-us"); err != nil || !reflect.DeepEqual(got, []string{"həlˈoʊ."}) {
		t.Fatalf("after an unknown voice: %q, %v", got, err)
	}
	if iso.childPID() != pid {
		t.Errorf("the child was replaced after an ordinary error")
	}
}

// A child process whose binary does not serve must not start children of its own.
func TestNewIsolatedRefusesInsideChild(t *testing.T) {
	t.Setenv(childEnv, "1")
	if _, err := NewIsolated("", time.Second); err == nil || !strings.Contains(err.Error(), "ServeChildIfAsked") {
		t.Fatalf("NewIsolated with %s set: err = %v", childEnv, err)
	}
}

func TestIsolatedRecoversFromCrashAndHang(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		kill     syscall.Signal // sent to the child 100 ms into the request, if not 0
		wantErr  string         // "" = the retry in a fresh child succeeds
		maxDelay time.Duration
	}{
		{"crash every time", hookCrash, 0, "phonemes: espeak-ng crashed on this text, also when retried in a fresh " +
			"process (exit status 2: SIGSEGV: segmentation violation)", 10 * time.Second},
		{"crash that depends on earlier texts", hookCrashIfUsed, 0, "", 10 * time.Second},
		{"killed by a signal", hookSlow, syscall.SIGSEGV, "", 10 * time.Second},
		{"hang", hookHang, 0, "phonemes: espeak-ng did not finish this text within 500ms", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iso := newTestIsolated(t, 500*time.Millisecond)
			if _, err := iso.Phonemize("Hello.", "en-us"); err != nil {
				t.Fatal(err)
			}
			pid := iso.childPID()
			if tt.kill != 0 {
				time.AfterFunc(100*time.Millisecond, func() { syscall.Kill(pid, tt.kill) })
			}
			start := time.Now()
			got, err := iso.Phonemize(tt.text, "en-us")
			if tt.wantErr == "" && (err != nil || len(got) != 1 || !strings.Contains(got[0], "tˈɛst")) {
				t.Fatalf("got %q, %v; want the phonemes of the text from the retry", got, err)
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if took := time.Since(start); took > tt.maxDelay {
				t.Errorf("the request took %s", took)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the old child %d is still there (kill 0: %v)", pid, err)
			}
			got, err = iso.Phonemize("Hello.", "en-us")
			if err != nil || !reflect.DeepEqual(got, []string{"həlˈoʊ."}) {
				t.Fatalf("next request = %q, %v; want a fresh child's answer", got, err)
			}
			if newPID := iso.childPID(); newPID == 0 || newPID == pid {
				t.Errorf("child pid %d after the failure, was %d", newPID, pid)
			}
		})
	}
}

// A child that died between requests (killed from outside) costs the next text nothing.
func TestIsolatedReplacesDeadChild(t *testing.T) {
	iso := newTestIsolated(t, 0)
	pid := iso.childPID()
	syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond) // let it die
	if got, err := iso.Phonemize("Hello.", "en-us"); err != nil || !reflect.DeepEqual(got, []string{"həlˈoʊ."}) {
		t.Fatalf("after the child was killed = %q, %v", got, err)
	}
	if newPID := iso.childPID(); newPID == pid {
		t.Errorf("still child %d", pid)
	}
}

func TestIsolatedClose(t *testing.T) {
	iso := newTestIsolated(t, 0)
	pid := iso.childPID()
	if err := iso.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d still exists after Close (kill 0: %v)", pid, err)
	}
	if err := iso.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := iso.Phonemize("Hello.", "en-us"); err == nil || err.Error() != "phonemes: phonemizer is closed" {
		t.Errorf("Phonemize after Close: err = %v", err)
	}
}

// Concurrent callers each get the answer to their own text.
func TestIsolatedConcurrent(t *testing.T) {
	iso := newTestIsolated(t, 0)
	want := map[string][]string{"en-us": {"wˈiːkɛnd."}, "fr": {"wiːkˈɛnd."}, "de": {"ɪc\u0327."}}
	texts := map[string]string{"en-us": "weekend.", "fr": "weekend.", "de": "ich."}
	var wg sync.WaitGroup
	errs := make(chan string, 300)
	for i := range 300 {
		voice := []string{"en-us", "fr", "de"}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := iso.Phonemize(texts[voice], voice)
			if err != nil || !reflect.DeepEqual(got, want[voice]) {
				errs <- fmt.Sprintf("%s: %q, %v", voice, got, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

// Crashes, hangs and Close leave no goroutine behind.
func TestIsolatedNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	iso, err := NewIsolated("", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Hello.", hookCrash, "Hello.", hookHang, "Hello."} {
		iso.Phonemize(text, "en-us")
	}
	iso.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines before, %d after", before, after)
	}
}

// BenchmarkIsolatedLJSpeech is BenchmarkPhonemizeLJSpeech through the child process.
func BenchmarkIsolatedLJSpeech(b *testing.B) {
	texts := ljSpeechTexts(b)
	iso := newTestIsolated(b, 0)
	idMap := loadTestIDMap(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sentences, err := iso.Phonemize(texts[i%len(texts)], "en-us")
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range sentences {
			IDs(s, idMap)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
