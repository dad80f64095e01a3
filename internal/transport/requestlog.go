package transport

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// RequestLog lets the request log skip slog's generic machinery: each
// line is appended field by field into a reused buffer and written to
// Out whole. The lines are byte for byte what the server's logger would
// write, so it must be a plain slog.NewJSONHandler (or, with Text,
// slog.NewTextHandler) on Out, with no ReplaceAttr, AddSource, group or
// With attributes. Its level still decides which lines are written.
// A line whose fields would need escaping or quoting (rare: a path with
// a space or a quote, the error of a request its client gave up) goes
// through the logger instead, so the encoding rules stay slog's.
type RequestLog struct {
	Out  io.Writer
	Text bool

	mu sync.Mutex // one Write per line, as slog's handlers hold theirs
}

// requestLine is one request's log line.
type requestLine struct {
	time                           time.Time
	level                          slog.Level
	id, method, route, path, token string
	err                            string // why nothing, or not all, was answered; "" for none
	status                         int
	bytes                          int64
	duration                       time.Duration
}

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// write writes l and reports whether it could; false leaves the line to
// slog.
func (rl *RequestLog) write(l *requestLine) bool {
	if l.err != "" || !plain(l.id) || !plain(l.method) || !plain(l.route) || !plain(l.path) || l.token != "" && !plain(l.token) {
		return false
	}
	bp := lineBuffers.Get().(*[]byte)
	b := (*bp)[:0]
	if rl.Text {
		b = l.appendText(b)
	} else {
		b = l.appendJSON(b)
	}
	rl.mu.Lock()
	_, _ = rl.Out.Write(b) // a handler's write error is dropped by slog too
	rl.mu.Unlock()
	*bp = b
	lineBuffers.Put(bp)
	return true
}

// plain reports whether both of slog's formats write s as it is: not
// empty (the text format quotes ""), printable ASCII without space, '"',
// '\\' or '=' (which one or the other escapes or quotes).
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '=' {
			return false
		}
	}
	return true
}

// record is l for slog: the line RequestLog writes, field for field.
func (l *requestLine) record() slog.Record {
	r := slog.NewRecord(l.time, l.level, "request", 0)
	r.AddAttrs(slog.String("request_id", l.id), slog.String("method", l.method), slog.String("route", l.route),
		slog.String("path", l.path), slog.Int("status", l.status), slog.Int64("bytes", l.bytes), slog.Duration("duration", l.duration))
	if l.token != "" {
		r.AddAttrs(slog.String("token", l.token))
	}
	if l.err != "" {
		r.AddAttrs(slog.String("error", l.err))
	}
	return r
}

// appendJSON is slog.JSONHandler's line for l.
func (l *requestLine) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = l.time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"`...)
	b = append(b, l.level.String()...)
	b = append(b, `","msg":"request","request_id":"`...)
	b = append(b, l.id...)
	b = append(b, `","method":"`...)
	b = append(b, l.method...)
	b = append(b, `","route":"`...)
	b = append(b, l.route...)
	b = append(b, `","path":"`...)
	b = append(b, l.path...)
	b = append(b, `","status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(l.duration), 10)
	if l.token != "" {
		b = append(b, `,"token":"`...)
		b = append(b, l.token...)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// appendText is slog.TextHandler's line for l.
func (l *requestLine) appendText(b []byte) []byte {
	b = append(b, "time="...)
	// Milliseconds, always three digits, as slog writes them: format
	// with a tenth of a millisecond added, then drop that fourth digit.
	const prefix = len("2006-01-02T15:04:05.000")
	n := len(b)
	b = l.time.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
	b = append(b[:n+prefix], b[n+prefix+1:]...)
	b = append(b, " level="...)
	b = append(b, l.level.String()...)
	b = append(b, " msg=request request_id="...)
	b = append(b, l.id...)
	b = append(b, " method="...)
	b = append(b, l.method...)
	b = append(b, " route="...)
	b = append(b, l.route...)
	b = append(b, " path="...)
	b = append(b, l.path...)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, " duration="...)
	b = append(b, l.duration.String()...)
	if l.token != "" {
		b = append(b, " token="...)
		b = append(b, l.token...)
	}
	return append(b, '\n')
}
