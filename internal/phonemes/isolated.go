package phonemes

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Phonemizer turns text into one phoneme string per sentence for an espeak-ng voice. *Espeak does it
// in this process; *Isolated does it in a child process that may crash without taking the caller down.
type Phonemizer interface {
	Phonemize(text, voice string) ([]string, error)
}

// Sentence is one sentence of a text as espeak-ng reads it: the sentence's text and its phonemes (one string of
// Phonemize's).
type Sentence struct {
	Text     string `json:"text"`
	Phonemes string `json:"phonemes"`
}

// SentencePhonemizer is a Phonemizer that also says which part of the text each sentence is: espeak-ng, not the
// caller, finds where a text's sentences end. *Espeak and *Isolated are both.
type SentencePhonemizer interface {
	Phonemizer
	Sentences(text, voice string) ([]Sentence, error)
}

// phonemesOf is Phonemize's answer from Sentences': the sentences' phonemes alone.
func phonemesOf(sentences []Sentence, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var phonemes []string
	for _, s := range sentences {
		phonemes = append(phonemes, s.Phonemes)
	}
	return phonemes, nil
}

// Environment of the child process. childEnv makes a binary serve phonemization requests instead of
// doing its normal work (ServeChildIfAsked); childDataEnv carries the espeak-ng data path.
const (
	childEnv     = "TTSGEN_PHONEMIZER_CHILD"
	childDataEnv = "TTSGEN_PHONEMIZER_DATA"
	// testHooksEnv enables the magic texts below in the child; only this package's tests set it.
	testHooksEnv    = "TTSGEN_PHONEMIZER_TEST_HOOKS"
	hookCrash       = "\x00ttsgen-test-crash\x00"         // crashes every time
	hookCrashIfUsed = "\x00ttsgen-test-crash-if-used\x00" // crashes a child that served a request before
	hookSlow        = "\x00ttsgen-test-slow\x00"          // answers after 300 ms
	hookHang        = "\x00ttsgen-test-hang\x00"
)

// DefaultPhonemizeTimeout bounds one request to the child. LJSpeech lines take under a millisecond;
// a megabyte without punctuation takes a few seconds.
const DefaultPhonemizeTimeout = 20 * time.Second

// childStartTimeout bounds a child's start (loading libespeak-ng's data), whatever the request
// timeout: a machine busy with synthesis can take seconds to start a process.
const childStartTimeout = 30 * time.Second

type request struct {
	Text  string `json:"text"`
	Voice string `json:"voice"`
}

type response struct {
	Sentences []Sentence `json:"sentences"`
	Error     string     `json:"error,omitempty"`
}

// Isolated phonemizes with libespeak-ng in a child process (this executable, re-run with childEnv
// set), because libespeak-ng 1.51 crashes or hangs on some text (see doc.go): then at worst that one
// text gets an error, never the caller's process, and the next call starts a fresh child. Requests
// and replies are one JSON object per line on the child's stdin and stdout. Safe for concurrent use:
// requests are serialised, as libespeak-ng is serial anyway. The round trip costs about 80 µs a text
// (LJSpeech: 2,870 lines/s against 3,720 in process).
type Isolated struct {
	dataPath      string
	timeout       time.Duration
	textsPerChild int // a child is replaced after this many texts (TextsPerChild)

	mu     sync.Mutex // serialises requests and guards the fields below
	child  *child     // nil until needed, and after a crash or hang
	closed bool
}

// child is one running helper process. The parent's ends of its pipes are *os.File so that reads
// and writes can have deadlines: no goroutine is needed to time out a request.
type child struct {
	cmd     *exec.Cmd
	stdin   *os.File
	stdout  *os.File
	replies *bufio.Reader // reads stdout
	stderr  *tailBuffer
	served  int // texts answered
}

// TextsPerChild is how many texts one helper process phonemizes before a fresh one replaces it. libespeak-ng 1.51's
// memory grows with use (the helper's resident set rose from 45 MB to 175 MB over 100,000 short texts, ~1.3 KB a
// text) and its use-after-free can leave state that changes later texts' phonemes; a fresh process now and then
// bounds both, for the price of one start (loading espeak-ng's data) per TextsPerChild texts.
const TextsPerChild = 10_000

// NewIsolated starts a child that initialises libespeak-ng with dataPath ("" = library default), so
// that a helper which cannot start is reported here. timeout bounds each request (0 = DefaultPhonemizeTimeout).
// The binary must call ServeChildIfAsked at the start of main (or TestMain).
func NewIsolated(dataPath string, timeout time.Duration) (*Isolated, error) {
	if os.Getenv(childEnv) != "" {
		// We are a child whose binary did not call ServeChildIfAsked: starting another would recurse.
		return nil, fmt.Errorf("phonemes: %s is set but this binary does not serve phonemization (call ServeChildIfAsked first in main)", childEnv)
	}
	if timeout <= 0 {
		timeout = DefaultPhonemizeTimeout
	}
	iso := &Isolated{dataPath: dataPath, timeout: timeout, textsPerChild: TextsPerChild}
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if err := iso.start(); err != nil {
		return nil, err
	}
	return iso, nil
}

// Phonemize is Espeak.Phonemize run in the child. When the child crashes, the text is tried once
// more in a fresh child: libespeak-ng's use-after-free corrupts memory that later texts trip over,
// so the text that meets the crash is often not the one that caused it, and alone it usually
// succeeds. A second crash, or a text that takes longer than the timeout, is an error that says so;
// the child is then killed and the next call starts a new one.
func (iso *Isolated) Phonemize(text, voice string) ([]string, error) {
	return phonemesOf(iso.Sentences(text, voice))
}

// Sentences is Espeak.Sentences run in the child, as Phonemize is.
func (iso *Isolated) Sentences(text, voice string) ([]Sentence, error) {
	line, err := json.Marshal(request{Text: text, Voice: voice})
	if err != nil {
		return nil, fmt.Errorf("phonemes: encode request: %w", err)
	}
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if iso.closed {
		return nil, errors.New("phonemes: phonemizer is closed")
	}
	sentences, crashed, err := iso.attempt(line)
	if crashed {
		sentences, crashed, err = iso.attempt(line)
		if crashed {
			err = fmt.Errorf("phonemes: espeak-ng crashed on this text, also when retried in a fresh process (%w)", err)
		}
	}
	return sentences, err
}

// attempt sends one request line to the child, starting one if needed. crashed reports that the
// child died while working on it (or before: a child killed from outside between requests); err then
// says how. The caller holds mu.
func (iso *Isolated) attempt(line []byte) (sentences []Sentence, crashed bool, err error) {
	if iso.child == nil {
		if err := iso.start(); err != nil {
			return nil, false, err
		}
	}
	c := iso.child
	c.stderr.reset()
	deadline := time.Now().Add(iso.timeout)
	c.stdin.SetWriteDeadline(deadline)
	c.stdout.SetReadDeadline(deadline)
	resp, err := c.exchange(line)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		iso.stopChild()
		return nil, false, fmt.Errorf("phonemes: espeak-ng did not finish this text within %s", iso.timeout)
	case err != nil:
		exitErr := iso.stopChild()
		return nil, true, errors.New(describeExit(exitErr, c.stderr))
	}
	if c.served++; c.served >= iso.textsPerChild {
		iso.stopChild() // idle between requests: the next one starts a fresh child
	}
	if resp.Error != "" {
		return nil, false, errors.New(resp.Error)
	}
	return resp.Sentences, false, nil
}

// exchange writes one request line and reads the reply. An error means the child is unusable: it
// died (EOF, broken pipe), ran past the deadline, or wrote something that is not a reply.
func (c *child) exchange(line []byte) (response, error) {
	var resp response
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		return resp, err
	}
	reply, err := c.replies.ReadBytes('\n')
	if err != nil {
		return resp, err
	}
	if err := json.Unmarshal(reply, &resp); err != nil {
		return resp, fmt.Errorf("decode the espeak-ng helper's reply: %w", err)
	}
	return resp, nil
}

// Close kills the child. Later calls to Phonemize fail; Close again does nothing.
func (iso *Isolated) Close() error {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	iso.closed = true
	if iso.child != nil {
		iso.stopChild()
	}
	return nil
}

// start runs a new child and waits for it to report that libespeak-ng is initialised. The caller
// holds mu.
func (iso *Isolated) start() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("phonemes: find this executable to run the espeak-ng helper: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"=1", childDataEnv+"="+iso.dataPath)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("phonemes: start the espeak-ng helper: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return fmt.Errorf("phonemes: start the espeak-ng helper: %w", err)
	}
	tail := &tailBuffer{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, tail
	err = cmd.Start()
	stdinR.Close() // the child's ends
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return fmt.Errorf("phonemes: start the espeak-ng helper %s: %w", exe, err)
	}
	c := &child{cmd: cmd, stdin: stdinW, stdout: stdoutR, replies: bufio.NewReader(stdoutR), stderr: tail}
	iso.child = c

	// The first line says whether libespeak-ng started.
	c.stdout.SetReadDeadline(time.Now().Add(childStartTimeout))
	hello, err := c.replies.ReadBytes('\n')
	var resp response
	if err == nil {
		err = json.Unmarshal(hello, &resp)
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		iso.stopChild()
		return fmt.Errorf("phonemes: the espeak-ng helper did not start within %s", childStartTimeout)
	case err != nil:
		exitErr := iso.stopChild()
		return fmt.Errorf("phonemes: the espeak-ng helper failed to start (%s)", describeExit(exitErr, tail))
	case resp.Error != "":
		iso.stopChild()
		return errors.New(resp.Error)
	}
	return nil
}

// stopChild kills the child, reaps it and closes its pipes. It returns how the child ended. The
// caller holds mu.
func (iso *Isolated) stopChild() error {
	c := iso.child
	iso.child = nil
	c.cmd.Process.Kill()
	err := c.cmd.Wait()
	c.stdin.Close()
	c.stdout.Close()
	return err
}

// describeExit says how a child ended: the signal or exit status, and the Go runtime's line naming
// the signal when a crash in C code made it exit with status 2.
func describeExit(err error, stderr *tailBuffer) string {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		if err == nil {
			return "it exited"
		}
		return err.Error()
	}
	desc := exitErr.Error() // "signal: segmentation fault" or "exit status 2"
	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return desc
	}
	if line := stderr.signalLine(); line != "" {
		return desc + ": " + line
	}
	if line := stderr.lastLine(); line != "" {
		return desc + ": " + line
	}
	return desc
}

// tailBuffer keeps the start and the end of what a child wrote to stderr for the current request:
// a segmentation fault in libespeak-ng makes the Go runtime print "SIGSEGV: segmentation violation"
// first and then pages of registers and goroutine traces.
type tailBuffer struct {
	mu         sync.Mutex
	head, tail []byte
}

const tailKeep = 4096

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := tailKeep - len(b.head); room > 0 {
		b.head = append(b.head, p[:min(room, len(p))]...)
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > tailKeep {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-tailKeep:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.head, b.tail = b.head[:0], b.tail[:0]
}

// signalLine is the Go runtime's line naming the signal that killed the child, without addresses,
// or "".
func (b *tailBuffer) signalLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, line := range strings.Split(string(b.head), "\n") {
		// "[signal SIGSEGV: segmentation violation code=... addr=... pc=...]" for a fault, and
		// "SIGSEGV: segmentation violation" for a signal the runtime cannot handle otherwise.
		line = strings.TrimPrefix(line, "[signal ")
		if strings.HasPrefix(line, "SIG") && strings.Contains(line, ": ") {
			name, _, _ := strings.Cut(line, " code=")
			return strings.TrimSuffix(name, "]")
		}
	}
	return ""
}

func (b *tailBuffer) lastLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(b.tail)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// ServeChildIfAsked makes this process an Isolated's child when it was started as one: it serves
// requests on stdin and stdout with an in-process Espeak and exits. Otherwise it returns at once.
// Call it first in main, and in TestMain of any test binary that creates an Isolated.
func ServeChildIfAsked() {
	if os.Getenv(childEnv) == "" {
		return
	}
	os.Exit(serveChild(os.Stdin, os.Stdout))
}

// serveChild answers one JSON request per line until stdin ends, and returns the exit status.
func serveChild(in io.Reader, out io.Writer) int {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	esp, err := NewEspeak(os.Getenv(childDataEnv))
	if err != nil {
		enc.Encode(response{Error: err.Error()})
		return 1
	}
	if err := enc.Encode(response{}); err != nil {
		return 1
	}
	go exitWithParent()
	requests := json.NewDecoder(in)
	hooks := os.Getenv(testHooksEnv) != ""
	served := 0
	for {
		var req request
		if err := requests.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0 // the parent closed the pipe
			}
			return 1
		}
		if hooks {
			runTestHook(req.Text, served)
		}
		served++
		sentences, err := esp.Sentences(req.Text, req.Voice)
		resp := response{Sentences: sentences}
		if err != nil {
			resp.Error = err.Error()
		}
		if err := enc.Encode(resp); err != nil {
			return 1
		}
	}
}

// exitWithParent ends the child when its parent has gone (it is then re-parented), even while
// libespeak-ng is stuck in a loop: a parent that is killed cannot kill its child.
func exitWithParent() {
	parent := os.Getppid()
	for range time.Tick(time.Second) {
		if os.Getppid() != parent {
			os.Exit(1)
		}
	}
}

// runTestHook simulates libespeak-ng crashing or hanging on the magic test texts.
func runTestHook(text string, served int) {
	switch {
	case text == hookCrash, text == hookCrashIfUsed && served > 0:
		// A nil dereference makes the Go runtime print the same "[signal SIGSEGV: ...]" line and
		// exit with status 2, as it does for a segmentation fault inside libespeak-ng.
		var p *int
		*p = 1
	case text == hookSlow:
		time.Sleep(300 * time.Millisecond)
	case text == hookHang:
		time.Sleep(time.Hour)
	}
}
