//go:build linux

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/check"
)

// feedServer serves an RFC index of one lone SKILL.md at its
// content-addressed URL; body is what the artifact URL answers, and
// indexETag, if set, replaces the index's true ETag.
func feedServer(t *testing.T, good, body []byte, indexETag string) *httptest.Server {
	t.Helper()
	sum := sha256.Sum256(good)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/agent-skills/index.json":
			idx, _ := json.Marshal(map[string]any{"$schema": check.RFCSchema, "skills": []map[string]any{{
				"name": "demo", "type": "skill-md", "description": "A demo.", "version": "1.0.0",
				"url":    srv.URL + "/api/v1/blobs/sha256/" + hex.EncodeToString(sum[:]) + "/SKILL.md",
				"digest": digest,
			}}})
			s := sha256.Sum256(idx)
			etag := `"sha256:` + hex.EncodeToString(s[:]) + `"`
			if indexETag != "" {
				etag = indexETag
			}
			w.Header().Set("ETag", etag)
			_, _ = w.Write(idx)
		case "/api/v1/blobs/sha256/" + hex.EncodeToString(sum[:]) + "/SKILL.md":
			if body == nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("ETag", `"`+digest+`"`) // what the feed promised, whatever is sent
			_, _ = w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testSoak(t *testing.T, base string, window time.Duration) *soak {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	fails, err := newFailures("")
	if err != nil {
		t.Fatal(err)
	}
	return &soak{base: base, window: window, run: ctx, hard: ctx, gens: newGenTracker(base), edits: newEditLog(), fails: fails}
}

// TestVerifierFlagsDigestMismatch: one wrong byte in an artifact, or a
// document that does not hash to its ETag, is a digest mismatch; the
// right bytes verify.
func TestVerifierFlagsDigestMismatch(t *testing.T) {
	good := []byte("---\nname: demo\ndescription: A demo.\n---\n\n# demo\n")
	bad := []byte(strings.Replace(string(good), "demo\n", "dem0\n", 1))
	for _, tc := range []struct {
		name      string
		body      []byte
		indexETag string
		mismatch  int
		verified  int64
	}{
		{"the right bytes", good, "", 0, 1},
		{"one wrong byte", bad, "", 1, 0},
		{"a document that is not its ETag", good, `"sha256:` + strings.Repeat("0", 64) + `"`, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := feedServer(t, good, tc.body, tc.indexETag)
			s := testSoak(t, srv.URL, time.Minute)
			newSyncer(s, 1).rfcPass()
			if got := s.fails.inClass(classDigest); got != tc.mismatch {
				t.Errorf("%d digest mismatches, want %d", got, tc.mismatch)
			}
			if got := s.fails.all(); got != tc.mismatch {
				t.Errorf("%d failures in all, want %d", got, tc.mismatch)
			}
			if got := s.stats[kindRFC].artifacts.Load(); got != tc.verified {
				t.Errorf("%d artifacts verified, want %d", got, tc.verified)
			}
		})
	}
}

// TestNotFoundClasses: a 404 for an artifact a document advertised
// within the retention window breaks the server's promise; past it, a
// 404 is explained only when the editor changed the item.
func TestNotFoundClasses(t *testing.T) {
	good := []byte("---\nname: demo\ndescription: A demo.\n---\n")
	for _, tc := range []struct {
		name   string
		window time.Duration
		edited bool
		class  string // "" for explained
	}{
		{"within the window", time.Minute, true, classRetention},
		{"past the window, item edited", time.Nanosecond, true, ""},
		{"past the window, item never edited", time.Nanosecond, false, classStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := feedServer(t, good, nil, "")
			s := testSoak(t, srv.URL, tc.window)
			if tc.edited {
				s.edits.record(editDeleteSkill, "skill:demo")
			}
			newSyncer(s, 1).rfcPass()
			explained := s.stats[kindRFC].explained.Load()
			switch {
			case tc.class == "" && (explained != 1 || s.fails.all() != 0):
				t.Errorf("%d explained, %d failures; want the 404 explained", explained, s.fails.all())
			case tc.class != "" && (s.fails.inClass(tc.class) != 1 || s.fails.all() != 1):
				t.Errorf("%d %q failures of %d; want exactly one", s.fails.inClass(tc.class), tc.class, s.fails.all())
			}
		})
	}
}

// series makes samples every 5 s for d, RSS f(minutes) MiB.
func series(d time.Duration, f func(min float64) float64) []sample {
	var ss []sample
	for at := time.Duration(0); at <= d; at += 5 * time.Second {
		ss = append(ss, sample{at: at, rss: int64(f(at.Minutes()) * mib), heapInuse: 50 * mib})
	}
	return ss
}

// TestMemoryJudge: a steady rise fails on its slope, a step up on the
// growth, a sawtooth around a level passes, and too few samples are not
// judged.
func TestMemoryJudge(t *testing.T) {
	saw := func(m float64) float64 { return 200 + 15*math.Sin(m*7) } // GC cycles: ±15 MiB
	for _, tc := range []struct {
		name     string
		ss       []sample
		from     time.Duration
		problems []string // substrings, one per problem
	}{
		{"level sawtooth", series(10*time.Minute, saw), 5 * time.Minute, nil},
		{"rising 3 MiB/min", series(10*time.Minute, func(m float64) float64 { return saw(m) + 3*m }), 5 * time.Minute, []string{"MiB/min"}},
		{"a small server's slow rise", series(30*time.Minute, func(m float64) float64 { return 1 + 1.5*m }), 15 * time.Minute, []string{"ended at"}},
		{"a short window's steep slope, not a growth", series(3*time.Minute, func(m float64) float64 { return 400 + 60*m }), 150 * time.Second, nil},
		{"a short window's step up", series(3*time.Minute, func(m float64) float64 { return 100 + 100*math.Floor(m/2.75) }), 150 * time.Second, []string{"ended at"}},
		{"too few samples", series(time.Minute, func(m float64) float64 { return 100 + 100*m }), 50 * time.Second, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := judgeMemory(tc.ss, tc.from, 2, 1.5)
			if len(m.problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %d (slope %.2f MiB/min, growth %.2f)", m.problems, len(tc.problems), m.rss.slope, m.rss.growth)
			}
			for i, p := range tc.problems {
				if !strings.Contains(m.problems[i], p) {
					t.Errorf("problem %q, want it to mention %q", m.problems[i], p)
				}
			}
			if strings.HasPrefix(tc.name, "too few") == (m.judged >= 6) {
				t.Errorf("%d samples judged", m.judged)
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	m, err := parseMetrics(strings.NewReader(`# HELP x
go_memstats_heap_inuse_bytes 1.2e+07
skillserver_http_requests_total{route="/a",method="GET",code="200"} 7
skillserver_http_requests_total{route="/a",method="GET",code="503"} 2
skillserver_http_requests_total{route="/b",method="GET",code="5xx"} 1
skillserver_http_requests_total_other{code="500"} 100
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.int("go_memstats_heap_inuse_bytes"); got != 12_000_000 {
		t.Errorf("heap %d", got)
	}
	if got := m.sum("skillserver_http_requests_total", `code="5`); got != 3 {
		t.Errorf("5xx sum %d, want 3", got)
	}
}

func TestRemark(t *testing.T) {
	b := remark([]byte("# x\n"), 1)
	b = remark(b, 22)
	if want := "# x\n" + fmt.Sprintf("%s22 -->\n", editMark); string(b) != want {
		t.Errorf("%q, want %q", b, want)
	}
}

// TestJudgedFrom: the window starts after the warm-up and at half the
// run, but a short run still has its last quarter judged.
func TestJudgedFrom(t *testing.T) {
	for _, tc := range []struct {
		duration, warmup, from time.Duration
		cut                    bool
	}{
		{30 * time.Minute, 150 * time.Second, 15 * time.Minute, false},
		{10 * time.Minute, 6 * time.Minute, 6 * time.Minute, false},
		{3 * time.Minute, 150 * time.Second, 135 * time.Second, true},
	} {
		from, cut := judgedFrom(config{duration: tc.duration, warmup: tc.warmup})
		if from != tc.from || cut != tc.cut {
			t.Errorf("%v with warm-up %v: from %v (cut %v), want %v (%v)", tc.duration, tc.warmup, from, cut, tc.from, tc.cut)
		}
	}
}
