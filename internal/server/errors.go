package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Error is an API error as every route answers it, in the shape OpenAI's clients read:
// {"error":{"message","type","param","code"}}. Param names the request field at fault (null when none is); Message
// says what to change, without naming the field, so that a layer which names the fields differently (the OpenAI
// one) can rename Param and keep Message.
type Error struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

func (e *Error) Error() string { return e.Message }

// Error types, as OpenAI names them.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeRateLimit      = "rate_limit_error"
	TypeServer         = "server_error"
)

// BadRequest is a 400 about one field of the request (param), or about the body as a whole (param "").
func BadRequest(param, code, format string, args ...any) *Error {
	e := &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: code, Message: fmt.Sprintf(format, args...)}
	if param != "" {
		e.Param = &param
	}
	return e
}

// errorBody is the JSON envelope of an Error.
type errorBody struct {
	Error *Error `json:"error"`
}

// WriteError answers the request with e.
func WriteError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="ttsgen"`)
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(errorBody{e})
}

// DecodeError reads an error body as WriteError writes it; nil if body is not one.
func DecodeError(status int, body []byte) *Error {
	var b errorBody
	if json.Unmarshal(body, &b) != nil || b.Error == nil || b.Error.Message == "" {
		return nil
	}
	b.Error.Status = status
	return b.Error
}

// retryAfterSeconds is what a 429 or 503 tells a client to wait before trying again.
const retryAfterSeconds = 1

var (
	// ErrNotReady answers what needs the voices while they load (the OpenAI layer's voice list too).
	ErrNotReady = &Error{Status: http.StatusServiceUnavailable, Type: TypeServer, Code: "not_ready",
		Message: "the server is still loading its voices; try again in a moment (GET /health says 200 once it is ready)"}
	errDraining = &Error{Status: http.StatusServiceUnavailable, Type: TypeServer, Code: "shutting_down",
		Message: "the server is shutting down and takes no new requests; send this one to another instance or retry once it is back"}
	errUnauthorized = &Error{Status: http.StatusUnauthorized, Type: TypeInvalidRequest, Code: "invalid_api_key",
		Message: "missing or wrong API key: send the server's key as \"Authorization: Bearer KEY\""}
	// errClientGone answers a request whose client went away, with nginx's status for it.
	errClientGone = &Error{Status: 499, Type: TypeInvalidRequest, Code: "client_closed_request",
		Message: "the client closed the request before its audio was ready"}
	errNotFound = &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: "not_found",
		Message: "no such route: speech is POST /v1/audio/speech (OpenAI's API) or POST /api/speech (ttsgen's own)"}
)

func errQueueFull(limit int) *Error {
	return &Error{Status: http.StatusTooManyRequests, Type: TypeRateLimit, Code: "queue_full",
		Message: fmt.Sprintf("the server is busy: %d requests are already being spoken or waiting, its limit "+
			"(ttsgen serve --max-queue); retry shortly", limit)}
}

func errBodyTooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Type: TypeInvalidRequest, Code: "request_too_large",
		Message: fmt.Sprintf("the request body is larger than the %d bytes this server reads; send less text at a time", limit)}
}

func errInternal(err error) *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeServer, Code: "synthesis_failed",
		Message: "synthesis failed: " + err.Error()}
}
