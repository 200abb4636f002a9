package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/cors"
)

// Handler serves the routes: the native ones, and what each of mount adds to the same mux (the OpenAI layer), all
// behind the API key check (every route but /health) and the request metrics, and, when the server allows other
// origins, CORS in front of those.
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
	return s.allowOrigins(s.instrument(mux, s.authenticate(mux)))
}

// allowOrigins lets web pages of Options.AllowOrigins call the server from a browser, when there are any. It is the
// outermost layer because a browser's preflight (OPTIONS, before a request with a key or JSON) carries no API key
// and asks nothing of a route: answered here, it needs no key, is admitted to nothing and counts as no route's
// request.
func (s *Server) allowOrigins(next http.Handler) http.Handler {
	if len(s.opts.AllowOrigins) == 0 {
		return next // not even Vary: Origin, so that a server that allows no origin answers as it always has
	}
	return cors.New(cors.Options{
		AllowedOrigins: s.opts.AllowOrigins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost},
		// Any header: OpenAI's JavaScript client adds X-Stainless-* headers of its own, more with its releases, and a
		// list would refuse its preflights whenever it grows one. The origin is the check; the key still guards.
		AllowedHeaders: []string{"*"},
		// Those of the server's own headers a page's script needs: the rate of raw pcm, and when to retry a 429 or 503.
		ExposedHeaders: []string{"X-Sample-Rate", "Retry-After"},
		// A page that sends a request per sentence would otherwise pay a preflight before each (browsers cache one
		// for 5 s unless told).
		MaxAge: 600,
	}).Handler(next)
}

// CheckOrigin says why origin cannot be one of Options.AllowOrigins, or nil if it can: it must be "*" or an origin
// as a browser sends it in its Origin header, SCHEME://HOST[:PORT]. Anything after (a path, even "/") would never
// match one, and a "*" inside would be taken for a pattern.
func CheckOrigin(origin string) error {
	if origin == "*" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Hostname() == "" || strings.HasSuffix(u.Host, ":") ||
		strings.Contains(origin, "*") || !strings.EqualFold(origin, u.Scheme+"://"+u.Host) {
		return errors.New("want * (any origin) or SCHEME://HOST[:PORT] as a browser sends it, without a path " +
			"(not even /), such as https://app.example.com or http://localhost:3000")
	}
	return nil
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
