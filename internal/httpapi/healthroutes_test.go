package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
)

type nilSnapshots struct{}

func (nilSnapshots) Current() *catalog.Snapshot { return nil }

func (nilSnapshots) Locate(*catalog.Snapshot, catalog.Lookup) (catalog.Found, bool) {
	return catalog.Found{}, false
}

func TestNotReady(t *testing.T) {
	s := NewServer(nilSnapshots{}, Options{}, slog.New(slog.DiscardHandler))
	for _, p := range []string{"/readyz", "/.well-known/agent-skills/index.json", "/api/v1/skills/a/1/SKILL.md"} {
		if r := do(t, s, "GET", p); r.code != 503 {
			t.Errorf("%s: %d, want 503", p, r.code)
		}
	}
	if r := do(t, s, "GET", "/healthz"); r.code != 200 {
		t.Errorf("/healthz: %d", r.code)
	}
}

func TestInfo(t *testing.T) {
	s, _ := newTestServer(t, Options{Build: BuildInfo{Version: "1.2.3", GoVersion: "go"}})
	r := do(t, s, "GET", "/api/v1/info")
	var info infoBody
	if err := json.Unmarshal(r.body, &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != "1.2.3" || info.Skills != 5 || info.SkillVersions != 7 || info.Generation != 1 {
		t.Errorf("info = %+v", info)
	}
	r = do(t, s, "GET", "/health")
	if !bytes.Contains(r.body, []byte(`"status": "healthy"`)) {
		t.Errorf("health = %s", r.body)
	}
}
