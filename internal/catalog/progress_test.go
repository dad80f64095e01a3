package catalog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillserver/skillserver/internal/scan"
)

// TestScanProgressIsLogged: a scan that runs past progressEvery logs,
// every progressEvery, the entries scanned of the total and the rate;
// one done sooner logs nothing. Time is synctest's, so no wall clock is
// involved.
func TestScanProgressIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		c := New(Source{}, slog.New(slog.NewJSONHandler(&out, nil)))
		p := &scan.Progress{}
		stop := c.logProgress(p, time.Now())
		time.Sleep(progressEvery - time.Millisecond)
		synctest.Wait()
		if out.Len() != 0 {
			t.Fatalf("logged before progressEvery: %s", out.String())
		}
		setProgress(p, 3000, 10000)
		time.Sleep(time.Millisecond)
		synctest.Wait()
		setProgress(p, 8000, 11000)
		time.Sleep(progressEvery)
		synctest.Wait()
		stop()
		time.Sleep(10 * progressEvery)
		synctest.Wait()

		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d progress lines, want 2:\n%s", len(lines), out.String())
		}
		for i, want := range []struct{ scanned, total, rate float64 }{{3000, 10000, 1500}, {8000, 11000, 2000}} {
			var rec map[string]any
			if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
				t.Fatal(err)
			}
			if rec["msg"] != "scan progress" || rec["level"] != "INFO" || rec["entries_scanned"] != want.scanned ||
				rec["entries_total"] != want.total || rec["entries_per_second"] != want.rate {
				t.Errorf("line %d: %s; want %v entries of %v at %v/s", i, lines[i], want.scanned, want.total, want.rate)
			}
		}
	})
}

// setProgress sets p's counts as a scan would have moved them.
func setProgress(p *scan.Progress, done, total int64) {
	d, tot := p.Counts()
	p.Add(done-d, total-tot)
}
