package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Handler serves the routes: the native ones, and what each of mount adds to the same mux (the OpenAI layer), all
// behind the API key check (every route but /health) and the request metrics.
func (s *Server) Handler(mount ...func(*http.ServeMux)) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.Handle("GET /metrics", s.metrics.handler())
	mux.HandleFunc("GET /api/voices", s.listVoices)
	mux.HandleFunc("POST /api/speech", s.Speech)
	for _, m := range mount {
		m(mux)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { answerNoRoute(mux, w, r) })
	return s.instrument(mux, s.authenticate(mux))
}

// answerNoRoute answers a request no route takes: 405, with the Allow header HTTP asks for, where the path has a
// route for another method; else 404.
func answerNoRoute(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = method
		if _, pattern := mux.Handler(probe); pattern != "/" {
			allowed = append(allowed, method)
		}
	}
	if len(allowed) == 0 {
		WriteError(w, errNotFound)
		return
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	WriteError(w, &Error{Status: http.StatusMethodNotAllowed, Type: TypeInvalidRequest, Code: "method_not_allowed",
		Message: fmt.Sprintf("%s %s: this route takes %s", r.Method, r.URL.Path, strings.Join(allowed, " or "))})
}

// authenticate lets a request through when the server has no API key, when it carries the key as a bearer token
// (the scheme's name in any case, as HTTP has it), or when it asks for /health (which load balancers probe without
// credentials).
func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.opts.APIKey == "" {
		return next
	}
	want := []byte(s.opts.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		bearer := strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), want) == 1
		if r.URL.Path != "/health" && !bearer {
			WriteError(w, errUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// instrument counts every request by its route's pattern and the status it got ("aborted" for a response cut off
// mid-stream).
func (s *Server) instrument(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, route := mux.Handler(r)
		if route == "/" {
			route = "other" // one label for every unknown path, so that scanners cannot grow the series
		}
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				s.metrics.requests.WithLabelValues(route, "aborted").Inc()
				panic(v)
			}
			s.metrics.countRequest(route, rec.statusCode())
		}()
		next.ServeHTTP(rec, r)
	})
}

// statusRecorder remembers the status a handler sent. It unwraps, so http.ResponseController reaches the
// connection's flush and deadlines underneath.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

func (r *statusRecorder) Flush() { _ = http.NewResponseController(r.ResponseWriter).Flush() }

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// ReadBody reads a request's body: at most the server's MaxBodyBytes (a larger one is a 413), within
// BodyTimeout (so a client that trickles its body holds no handler for long).
func (s *Server) ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))
	defer rc.SetReadDeadline(time.Time{})
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errBodyTooLarge(tooLarge.Limit)
	case err != nil:
		return nil, BadRequest("", "unreadable_body", "reading the request body: %v", err)
	}
	return body, nil
}
