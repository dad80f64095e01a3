package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/skill"
	"github.com/skillserver/skillserver/internal/transport"
)

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the server's own work per request, not a recorder's.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// SetWriteDeadline succeeds, as on a connection (transport.SendDeadline).
func (w *discardWriter) SetWriteDeadline(time.Time) error { return nil }

// countingObserver stands in for the metrics: it binds per route, as
// metrics.Metrics does, and counts.
type countingObserver struct{ n int }

func (o *countingObserver) ForRoute(string) transport.RequestObserver {
	return func(string, int, time.Duration) { o.n++ }
}
func (o *countingObserver) ObserveRequest(string, string, int, time.Duration) { o.n++ }
func (o *countingObserver) ObservePanic()                                     {}
func (o *countingObserver) ObserveRefusal(string)                             {}

// BenchmarkServe is the handler chain's cost per request (middleware,
// routing, the document or artifact lookup, headers, the request log as
// JSON), without the network: what the server adds to net/http's own
// work. Profile it with -cpuprofile; scripts/bench-serve.sh measures the
// whole against nginx.
func BenchmarkServe(b *testing.B) {
	s, snap := newTestServerLog(b, Options{WriteStallTimeout: 30 * time.Second, Observer: &countingObserver{},
		RequestLog: &transport.RequestLog{Out: io.Discard}}, // as serve sets it
		slog.New(slog.NewJSONHandler(io.Discard, nil)))
	index := feed.DocKey{Kind: feed.DocRFCIndex}.Path()
	sk := snap.Skills[0]
	for _, bc := range []struct {
		name, target string
		headers      []string
	}{
		{"index", index, nil},
		{"index-gzip", index, []string{"Accept-Encoding", "gzip"}},
		{"index-304", index, []string{"If-None-Match", "*"}},
		{"skill-md", "/api/v1/skills/" + sk.Name + "/" + sk.Latest.Version + "/SKILL.md?digest=" + string(sk.Latest.SkillMD), nil},
		{"blob-file", feed.ArtifactPath(sk.Latest.SkillMD, skill.FileName), nil},
		{"manifest", feed.DocKey{Kind: feed.DocManifest}.Path(), nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.target, nil)
			for i := 0; i+1 < len(bc.headers); i += 2 {
				req.Header.Set(bc.headers[i], bc.headers[i+1])
			}
			b.ReportAllocs()
			for b.Loop() {
				s.ServeHTTP(&discardWriter{h: http.Header{}}, req)
			}
		})
	}
}
