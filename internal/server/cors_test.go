package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/openai"
	"github.com/ttsgen/ttsgen/internal/server/servertest"
)

const pageOrigin = "http://localhost:3000" // a page's origin, as a browser sends it

// startWithOpenAI serves a ready server over eng with the tiny voice through both APIs, as serve does.
func startWithOpenAI(t *testing.T, opts server.Options, eng *servertest.Engine) *httptest.Server {
	t.Helper()
	s := server.New(opts)
	if err := s.Ready(servertest.Backend(t, eng, servertest.TinyVoice)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler(openai.Routes(s, openai.Voices{})))
	t.Cleanup(ts.Close)
	return ts
}

// preflight asks what a browser asks before it POSTs JSON with an API key from origin's page to path.
func preflight(t *testing.T, url, origin string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	servertest.ReadBody(t, resp, nil)
	return resp
}

// speechFrom POSTs an OpenAI speech request for pcm from origin's page, with key if it is set.
func speechFrom(t *testing.T, url, origin, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/audio/speech",
		strings.NewReader(`{"model": "tts-1", "input": "Hello there.", "voice": "alloy", "response_format": "pcm"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", origin)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// listed says whether a comma-separated header value lists name, in any case.
func listed(value, name string) bool {
	for _, v := range strings.Split(value, ",") {
		if strings.EqualFold(strings.TrimSpace(v), name) {
			return true
		}
	}
	return false
}

// A browser's preflight from an allowed origin is answered without the API key, even while the queue is full, and
// is no route's request: nothing reaches the engine and the metrics count nothing.
func TestCORSPreflightNeedsNoKeyAndIsNoRequest(t *testing.T) {
	eng := servertest.NewEngine(16, true)
	ts := startWithOpenAI(t, server.Options{APIKey: "sesame", MaxQueue: 1,
		AllowOrigins: []string{"https://app.example.com", pageOrigin}}, eng)
	held := make(chan *http.Response, 1)
	go func() { held <- speechFrom(t, ts.URL, pageOrigin, "sesame") }()
	<-eng.Submitted // the one place in the queue is taken

	resp := preflight(t, ts.URL+"/v1/audio/speech", pageOrigin)
	h := resp.Header
	if resp.StatusCode/100 != 2 || h.Get("Access-Control-Allow-Origin") != pageOrigin ||
		!listed(h.Get("Access-Control-Allow-Methods"), "POST") ||
		!listed(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
		!listed(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
		t.Errorf("preflight: status %d, headers %v; want 2xx allowing %s to POST with Authorization and Content-Type",
			resp.StatusCode, h, pageOrigin)
	}
	if n := len(eng.Submitted); n != 0 {
		t.Errorf("the preflight sent %d sentences to the engine", n)
	}
	eng.Release()
	servertest.ReadBody(t, <-held, nil)

	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer sesame")
	resp, err := http.DefaultClient.Do(req)
	metrics := string(servertest.ReadBody(t, resp, err))
	if !strings.Contains(metrics, `ttsgen_http_requests_total{code="200",route="POST /v1/audio/speech"} 1`) ||
		strings.Count(metrics, "ttsgen_http_requests_total{") != 1 {
		t.Errorf("metrics count the preflight as a request; want only the one speech request:\n%s",
			grepLines(metrics, "ttsgen_http_requests_total{"))
	}
}

// An allowed origin's page reads the audio and the headers it needs (every X- header the server sends); a page of
// another origin gets the same answer without the CORS headers, so its browser keeps the answer from it.
func TestCORSActualRequestFromAllowedAndOtherOrigins(t *testing.T) {
	ts := startWithOpenAI(t, server.Options{AllowOrigins: []string{"https://app.example.com", pageOrigin}},
		servertest.NewEngine(16, false))
	resp := speechFrom(t, ts.URL, pageOrigin, "")
	audio := servertest.ReadBody(t, resp, nil)
	h := resp.Header
	if resp.StatusCode != 200 || len(audio) == 0 || h.Get("Access-Control-Allow-Origin") != pageOrigin ||
		!listed(h.Get("Access-Control-Expose-Headers"), "X-Sample-Rate") ||
		!listed(h.Get("Access-Control-Expose-Headers"), "Retry-After") || !listed(h.Get("Vary"), "Origin") {
		t.Errorf("from %s: status %d, %d bytes, headers %v; want the audio, allowed to the origin, varying by it",
			pageOrigin, resp.StatusCode, len(audio), h)
	}
	sent := 0
	for name := range h {
		if strings.HasPrefix(name, "X-") {
			sent++
			if !listed(h.Get("Access-Control-Expose-Headers"), name) {
				t.Errorf("%s is not exposed to the page (Access-Control-Expose-Headers %q)", name,
					h.Get("Access-Control-Expose-Headers"))
			}
		}
	}
	if sent == 0 {
		t.Errorf("no X- header on a pcm response (X-Sample-Rate): %v", h)
	}

	const other = "https://elsewhere.example"
	resp = speechFrom(t, ts.URL, other, "")
	if body := servertest.ReadBody(t, resp, nil); resp.StatusCode != 200 || len(body) != len(audio) ||
		resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("POST from %s: status %d, %d bytes, headers %v; want the audio as ever, without Access-Control-Allow-Origin",
			other, resp.StatusCode, len(body), resp.Header)
	}
	if v := preflight(t, ts.URL+"/v1/audio/speech", other).Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("preflight from %s: Access-Control-Allow-Origin %q; want none", other, v)
	}
}

// "*" allows any origin, answering with "*" itself (the server asks for no cookies, so browsers accept it).
func TestCORSAnyOrigin(t *testing.T) {
	ts := startWithOpenAI(t, server.Options{AllowOrigins: []string{"*"}}, servertest.NewEngine(16, false))
	resp := preflight(t, ts.URL+"/v1/audio/speech", "https://anywhere.example")
	if resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight: status %d, headers %v; want 2xx, any origin allowed, no credentials", resp.StatusCode, resp.Header)
	}
	resp = speechFrom(t, ts.URL, "https://anywhere.example", "")
	servertest.ReadBody(t, resp, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("POST: status %d, headers %v; want the audio, any origin allowed", resp.StatusCode, resp.Header)
	}
}

// The API key guards a cross-origin request as any other: without it, 401, which the page may read (it says why).
func TestCORSRequestStillNeedsTheKey(t *testing.T) {
	eng := servertest.NewEngine(16, false)
	ts := startWithOpenAI(t, server.Options{APIKey: "sesame", AllowOrigins: []string{pageOrigin}}, eng)
	for _, key := range []string{"", "wrong"} {
		resp := speechFrom(t, ts.URL, pageOrigin, key)
		if resp.Header.Get("Access-Control-Allow-Origin") != pageOrigin {
			t.Errorf("key %q: headers %v; want the 401 readable by the page", key, resp.Header)
		}
		checkError(t, resp, 401, "invalid_api_key", nil, "Authorization: Bearer")
	}
	resp := speechFrom(t, ts.URL, pageOrigin, "sesame")
	if body := servertest.ReadBody(t, resp, nil); resp.StatusCode != 200 || len(body) == 0 {
		t.Errorf("with the key: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if n := len(eng.Submitted); n != 1 {
		t.Errorf("%d sentences reached the engine; want the one of the request with the key", n)
	}
}

// With no origin allowed, the server answers a preflight and a request from a page exactly as it always has: no CORS
// header, and OPTIONS is a method no route takes (405, or 401 first without the key).
func TestNoAllowedOriginsMeansNoCORS(t *testing.T) {
	for _, tt := range []struct {
		key    string
		status int
		code   string
	}{{"", 405, "method_not_allowed"}, {"sesame", 401, "invalid_api_key"}} {
		ts := startWithOpenAI(t, server.Options{APIKey: tt.key}, servertest.NewEngine(16, false))
		req, _ := http.NewRequest(http.MethodOptions, ts.URL+"/v1/audio/speech", nil)
		req.Header.Set("Origin", pageOrigin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		checkNoCORS(t, "preflight", resp)
		if tt.status == 405 && resp.Header.Get("Allow") != "POST" {
			t.Errorf("OPTIONS: Allow %q; want POST, as before", resp.Header.Get("Allow"))
		}
		checkError(t, resp, tt.status, tt.code, nil, "")

		resp = speechFrom(t, ts.URL, pageOrigin, tt.key)
		checkNoCORS(t, "POST", resp)
		if body := servertest.ReadBody(t, resp, nil); resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("POST with the key %q: status %d", tt.key, resp.StatusCode)
		}
	}
}

func checkNoCORS(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	for name, v := range resp.Header {
		if strings.HasPrefix(name, "Access-Control-") || name == "Vary" {
			t.Errorf("%s with no origin allowed: %s: %q; want no CORS header", what, name, v)
		}
	}
}

// grepLines is the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func TestCheckOrigin(t *testing.T) {
	for _, ok := range []string{"*", "https://app.example.com", "http://localhost:3000", "http://[::1]:8880", "app://obsidian.md"} {
		if err := server.CheckOrigin(ok); err != nil {
			t.Errorf("%q: %v; want it allowed", ok, err)
		}
	}
	for _, bad := range []string{"", "example.com", "localhost:3000", "http://x.com/path", "https://x.com/", "null",
		"https://*.example.com", "http://user@x.com", "http://x.com?q=1", "http://x.com:", "http://x.com:port"} {
		if err := server.CheckOrigin(bad); err == nil || !strings.Contains(err.Error(), "SCHEME://HOST[:PORT]") {
			t.Errorf("%q: %v; want an error saying what an origin looks like", bad, err)
		}
	}
}
