package httpapi

import (
	"errors"
	"github.com/skillserver/skillserver/internal/feed"
	"net/http"
	"strconv"
)

// Errors handlers return; errorTable maps them to statuses and codes.
var (
	errNotFound         = errors.New("not found")
	errBadRequest       = errors.New("bad request")
	errMethodNotAllowed = errors.New("method not allowed")
	errNotReady         = errors.New("not ready: the first scan has not finished")
	errShuttingDown     = errors.New("not ready: shutting down")
	errMisdirected      = errors.New("misdirected request")
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

// jsonErrorWriter turns error statuses written by http.ServeContent (416,
// 412) into JSON error bodies, and discards ServeContent's plain-text body.
type jsonErrorWriter struct {
	http.ResponseWriter
	size   int // of the whole body
	failed bool
}

func (w *jsonErrorWriter) WriteHeader(status int) {
	// ServeContent leaves Content-Length out of a whole encoded body (it
	// guards against compressing writers); net/http then counts a GET's
	// bytes but cannot count a HEAD's, and the two differed.
	if h := w.Header(); status == http.StatusOK && h.Get("Content-Length") == "" {
		h.Set("Content-Length", strconv.Itoa(w.size))
	}
	if status >= 400 && !w.failed {
		w.failed = true
		code := "bad_request"
		if status == http.StatusRequestedRangeNotSatisfiable {
			code = "range_not_satisfiable"
		} else if status == http.StatusPreconditionFailed {
			code = "precondition_failed"
		}
		writeError(w.ResponseWriter, status, code, http.StatusText(status))
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if w.failed {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
