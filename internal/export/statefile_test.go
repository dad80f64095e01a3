package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/fixture"
)

// The state file of 0.1.0 (every key to the last time an export named
// it) is read: what it names that no document names any more is pruned
// once old enough, and the file is replaced by the current form.
func TestStateFileOf010(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	out := t.TempDir()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	exportTo(t, snap, out, export.Options{Now: func() time.Time { return t0 }})
	var st struct {
		Keys []string `json:"keys"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, export.StateFile)), &st); err != nil {
		t.Fatal(err)
	}
	old := map[string]string{"skill/old/.well-known/agent-skills/index.json": "2026-12-01T10:00:00Z", "skill/recent/index.json": "2026-12-01T11:30:00Z"}
	for k := range old {
		write(t, filepath.Join(out, filepath.FromSlash(k)), "{}\n")
	}
	named := maps.Clone(old)
	for _, k := range st.Keys {
		named[k] = "2026-12-01T12:00:00Z"
	}
	b, err := json.Marshal(map[string]any{"named": named})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(out, export.StateFile), string(b))

	res := exportTo(t, snap, out, export.Options{PruneOlderThan: time.Hour, Now: func() time.Time { return t0.Add(time.Minute) }})
	if res.Pruned != 1 || res.Kept != 1 || res.Written != 0 {
		t.Errorf("export over a 0.1.0 state file %+v: want the key last named 2 hours ago pruned, the one 30 minutes ago kept, nothing written", res)
	}
	if _, err := os.Stat(filepath.Join(out, "skill", "old")); !os.IsNotExist(err) {
		t.Errorf("the pruned key's folder stays: %v", err)
	}
	raw := readFile(t, filepath.Join(out, export.StateFile))
	var got struct {
		Keys    []string          `json:"keys"`
		Unnamed map[string]string `json:"unnamed_since"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Keys, st.Keys) || !maps.Equal(got.Unnamed, map[string]string{"skill/recent/index.json": "2026-12-01T11:30:00Z"}) || bytes.Contains(raw, []byte(`"named"`)) {
		t.Errorf("state file after the export, want the current keys and the kept one unnamed since it was last named:\n%s", raw)
	}
}

// A state file that is not one is named, not overwritten.
func TestBadStateFile(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	out := t.TempDir()
	write(t, filepath.Join(out, export.StateFile), "not json")
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := export.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	_, err = export.Export(t.Context(), tgt, files, export.Options{BaseURL: base})
	if err == nil || !strings.Contains(err.Error(), export.StateFile) {
		t.Errorf("export over a bad state file: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, export.StateFile)); err != nil || string(b) != "not json" {
		t.Errorf("the bad state file was overwritten or removed: %q, %v", b, err)
	}
}

// A state file time that does not parse (edited by hand) is not old: the
// key is kept, and its time counts from this export.
func TestStateFileBadTimeIsKept(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	out := t.TempDir()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	exportTo(t, snap, out, export.Options{Now: func() time.Time { return t0 }})
	var st struct {
		Keys []string `json:"keys"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, export.StateFile)), &st); err != nil {
		t.Fatal(err)
	}
	const stray = "skill/gone/index.json"
	write(t, filepath.Join(out, filepath.FromSlash(stray)), "{}\n")
	b, err := json.Marshal(map[string]any{"keys": st.Keys, "unnamed_since": map[string]string{stray: "last Tuesday"}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(out, export.StateFile), string(b))

	later := t0.Add(48 * time.Hour)
	res := exportTo(t, snap, out, export.Options{PruneOlderThan: time.Hour, Now: func() time.Time { return later }})
	if res.Pruned != 0 || res.Kept != 1 {
		t.Errorf("export over a state file with a bad time %+v: want the key kept, nothing pruned", res)
	}
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(stray))); err != nil {
		t.Errorf("the key with a bad time was removed: %v", err)
	}
	var got struct {
		Unnamed map[string]string `json:"unnamed_since"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, export.StateFile)), &got); err != nil {
		t.Fatal(err)
	}
	if want := later.Format(time.RFC3339); got.Unnamed[stray] != want {
		t.Errorf("unnamed_since of the key = %q, want this export's time %q", got.Unnamed[stray], want)
	}
}
