package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/skillserver/skillserver/internal/feed"
)

// Errors handlers return; errorTable maps them to statuses and codes.
var (
	errNotFound         = errors.New("not found")
	errBadRequest       = errors.New("bad request")
	errMethodNotAllowed = errors.New("method not allowed")
	errNotReady         = errors.New("not ready: the first scan has not finished")
	errShuttingDown     = errors.New("not ready: shutting down")
	errMisdirected      = errors.New("misdirected request")

	// Read tokens (auth.go) and their throttle (auththrottle.go).
	errNoReadToken     = errors.New("unauthorized: this feed is private; send Authorization: Bearer <token> or prefix the path with /t/<token>")
	errBadReadToken    = errors.New("forbidden: the read token is not valid")
	errTooManyFailures = errors.New("too many requests: too many wrong tokens from this address; retry after the seconds of Retry-After")

	// The admin routes (admin.go).
	errUnauthorized = errors.New("unauthorized: send Authorization: Bearer <admin token>")
	errForbidden    = errors.New("forbidden: the admin token does not match")
	errReloadFailed = errors.New("reload failed; the previous snapshot is still served (see the server log)")
)

var errorTable = []struct {
	err    error
	status int
	code   string
}{
	{errNotFound, http.StatusNotFound, "not_found"},
	{errBadRequest, http.StatusBadRequest, "bad_request"},
	{errMethodNotAllowed, http.StatusMethodNotAllowed, "method_not_allowed"},
	{errNotReady, http.StatusServiceUnavailable, "not_ready"},
	{errShuttingDown, http.StatusServiceUnavailable, "not_ready"},
	{errMisdirected, http.StatusMisdirectedRequest, "misdirected_request"},
	{errUnauthorized, http.StatusUnauthorized, "unauthorized"},
	{errForbidden, http.StatusForbidden, "forbidden"},
	{errNoReadToken, http.StatusUnauthorized, "unauthorized"},
	{errBadReadToken, http.StatusForbidden, "forbidden"},
	{errTooManyFailures, http.StatusTooManyRequests, "too_many_requests"},
	{errReloadFailed, http.StatusServiceUnavailable, "reload_failed"},
}

// errorBody is the JSON body of every error response.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// fail writes err as a JSON error response. Errors outside errorTable are
// internal: logged here, and answered without their text.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg := http.StatusInternalServerError, "internal", "internal server error"
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			status, code, msg = e.status, e.code, err.Error()
			break
		}
	}
	if status == http.StatusInternalServerError {
		s.log.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", s.redactedPath(r), "error", err)
	}
	writeError(w, status, code, msg)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	b, _ := feed.Encode(errorBody{Error: code, Message: msg}) // strings only: cannot fail
	h := w.Header()
	for _, k := range []string{"ETag", "Last-Modified", "Content-Encoding", "Cache-Control"} {
		h.Del(k)
	}
	if status != http.StatusRequestedRangeNotSatisfiable {
		h.Del("Content-Range") // a 416 keeps "bytes */<length>"
	}
	h.Set("Content-Type", jsonContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// serveContentError answers an error status http.ServeContent chose
// (416, 412) as the JSON of every error (transport.Bytes).
func serveContentError(w http.ResponseWriter, status int) {
	code := "bad_request"
	if status == http.StatusRequestedRangeNotSatisfiable {
		code = "range_not_satisfiable"
	} else if status == http.StatusPreconditionFailed {
		code = "precondition_failed"
	}
	writeError(w, status, code, http.StatusText(status))
}

// writeJSON writes v as JSON, encoded now, not to be cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONCached(w, status, v, "no-store")
}

// writeJSONCached writes v as JSON, encoded now, with Cache-Control cc.
func writeJSONCached(w http.ResponseWriter, status int, v any, cc string) {
	b, err := feed.Encode(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "internal server error")
		return
	}
	h := w.Header()
	h.Set("Content-Type", jsonContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", cc)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
