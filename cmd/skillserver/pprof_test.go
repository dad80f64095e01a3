package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestMetricsPprof: metrics_pprof serves Go's profiles on the metrics
// listener, and nowhere else; without it they are absent.
func TestMetricsPprof(t *testing.T) {
	// As main leaves it: no heap profile samples until metrics_pprof.
	was := runtime.MemProfileRate
	runtime.MemProfileRate = 0
	t.Cleanup(func() { runtime.MemProfileRate = was })
	skills, _ := exampleTree(t)
	metricsAddr := fixture.FreePort(t)
	ts := startServer(t, "--skills", skills, "--metrics-listen", metricsAddr, "--metrics-pprof")
	metrics := "http://" + metricsAddr
	if runtime.MemProfileRate != memProfileRate {
		t.Errorf("with metrics_pprof, runtime.MemProfileRate = %d, want %d (sampling on)", runtime.MemProfileRate, memProfileRate)
	}

	if resp, body := ts.Get(t, metrics+"/debug/pprof/"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Errorf("GET /debug/pprof/ on the metrics listener: %d\n%.300s", resp.StatusCode, body)
	}
	resp, body := ts.Get(t, metrics+"/debug/pprof/profile?seconds=1")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CPU profile: %d %.300s", resp.StatusCode, body)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("CPU profile is not gzip: %v", err)
	}
	raw, err := io.ReadAll(zr)
	// A profile's string table names its sample types.
	if err != nil || !bytes.Contains(raw, []byte("cpu")) || !bytes.Contains(raw, []byte("nanoseconds")) {
		t.Errorf("CPU profile: %v, %d bytes without its sample types", err, len(raw))
	}
	if resp, body := ts.Get(t, metrics+"/debug/pprof/heap?debug=1"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Errorf("heap profile: %d %.200s", resp.StatusCode, body)
	}
	// A profile or trace holds its connection: bounded.
	for _, p := range []string{"/debug/pprof/profile?seconds=61", "/debug/pprof/trace?seconds=3600", "/debug/pprof/profile?seconds=1e9"} {
		if resp, body := ts.Get(t, metrics+p); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "at most 60") {
			t.Errorf("GET %s: %d %q, want 400 naming the bound", p, resp.StatusCode, body)
		}
	}
	// go tool pprof looks symbols up by POST.
	if resp, err := http.Post(metrics+"/debug/pprof/symbol", "text/plain", strings.NewReader("0x0")); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("POST /debug/pprof/symbol: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Never on the main listener.
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/pprof/heap"} {
		if resp, _ := ts.Get(t, p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on the main listener: %d, want 404", p, resp.StatusCode)
		}
	}
	ts.Stop(t)

	// Off by default.
	metricsAddr = fixture.FreePort(t)
	ts = startServer(t, "--skills", skills, "--metrics-listen", metricsAddr)
	if resp, _ := ts.Get(t, "http://"+metricsAddr+"/debug/pprof/"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/ without metrics_pprof: %d, want 404", resp.StatusCode)
	}
	if resp, body := ts.Get(t, "http://"+metricsAddr+"/metrics"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "skillserver_build_info") {
		t.Errorf("GET /metrics: %d", resp.StatusCode)
	}
}

// TestMetricsPprofNeedsItsListener: profiles never go on the main
// listener, so the key alone is a usage error that says what to set.
func TestMetricsPprofNeedsItsListener(t *testing.T) {
	skills, _ := exampleTree(t)
	code, out, errOut := runCmd(t, nil, "serve", "--skills", skills, "--listen", "127.0.0.1:0", "--metrics-pprof")
	if code != exitUsage || !strings.Contains(errOut, "metrics_pprof needs metrics_listen") || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 naming metrics_listen", code, out, errOut)
	}
}
