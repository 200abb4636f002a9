package server

import (
	"net/http/httptest"
	"testing"
	"time"
)

// A flush before the encoder has made any byte (the AAC encoder's come from ffmpeg a while after its input) sends
// nothing: the status and headers go with the first bytes, so the response still says what it holds.
func TestAFlushBeforeTheFirstBytesKeepsTheHeaders(t *testing.T) {
	format, _ := lookupFormat("pcm")
	rec := httptest.NewRecorder()
	var first time.Time
	a, err := newAudioStream(t.Context(), rec, format, 22050, time.Second, func(at time.Time) { first = at })
	if err != nil {
		t.Fatal(err)
	}
	defer a.release()
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.Flushed || !first.IsZero() {
		t.Fatalf("a flush with nothing encoded flushed the connection (flushed %v, first bytes at %v)", rec.Flushed, first)
	}
	if err := a.Write(make([]int16, 100)); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	res := rec.Result()
	if ct := res.Header.Get("Content-Type"); ct != "audio/pcm" || res.Header.Get("X-Sample-Rate") != "22050" || rec.Body.Len() != 200 || first.IsZero() {
		t.Errorf("Content-Type %q, X-Sample-Rate %q, %d bytes, first bytes at %v; want audio/pcm, 22050, 200 bytes, a time",
			ct, res.Header.Get("X-Sample-Rate"), rec.Body.Len(), first)
	}
}
