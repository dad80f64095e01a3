package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/transport"
)

type catalogReloader struct{ cat *catalog.Catalog }

func (c catalogReloader) ReloadNow(ctx context.Context) (*catalog.Snapshot, error) {
	return c.cat.Reload(ctx)
}

func TestAdminReload(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "---\nname: a\ndescription: d\n---\n")
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	disabled := NewServer(cat, Options{Reloader: catalogReloader{cat}}, slog.New(slog.DiscardHandler))
	if r := do(t, disabled, "POST", "/-/reload", "Authorization", "Bearer x"); r.code != 404 {
		t.Errorf("disabled: %d, want 404", r.code)
	}
	s := NewServer(cat, Options{AdminToken: "s3cret", Reloader: catalogReloader{cat}}, slog.New(slog.DiscardHandler))
	if r := do(t, s, "POST", "/-/reload"); r.code != 401 || r.header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d, want 401 with WWW-Authenticate", r.code)
	}
	if r := do(t, s, "POST", "/-/reload", "Authorization", "Bearer wrong"); r.code != 403 {
		t.Errorf("wrong token: %d, want 403", r.code)
	}
	if r := do(t, s, "GET", "/-/reload", "Authorization", "Bearer s3cret"); r.code != 405 {
		t.Errorf("GET: %d, want 405", r.code)
	}
	write("b", "---\nname: b\n---\n") // invalid: no description
	write("c", "---\nname: c\ndescription: d\n---\n")
	r := do(t, s, "POST", "/-/reload", "Authorization", "Bearer s3cret")
	if r.code != 200 {
		t.Fatalf("reload: %d %s", r.code, r.body)
	}
	var body struct {
		Generation uint64
		Skills     int
		Errors     int
		Problems   []struct{ Path, Rule string }
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Generation != 2 || body.Skills != 2 || body.Errors != 1 || len(body.Problems) != 1 || body.Problems[0].Rule != "description" {
		t.Errorf("reload answered %+v", body)
	}
	if cat.Current().Generation != 2 {
		t.Error("the answer came before the snapshot was live")
	}
	// Schemes are case-insensitive.
	for _, h := range []string{"bearer s3cret", "BEARER s3cret", "Bearer  s3cret"} {
		if r := do(t, s, "POST", "/-/reload", "Authorization", h); r.code != 200 {
			t.Errorf("Authorization %q: %d, want 200", h, r.code)
		}
	}
	for _, h := range []string{"Basic s3cret", "Bearer", "Bearer ", "Bearers3cret"} {
		if r := do(t, s, "POST", "/-/reload", "Authorization", h); r.code != 401 {
			t.Errorf("Authorization %q: %d, want 401", h, r.code)
		}
	}
}

type blockingReloader struct{ started chan struct{} }

func (b blockingReloader) ReloadNow(ctx context.Context) (*catalog.Snapshot, error) {
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// A reload the client gave up on was logged as a 200.
func TestAdminReloadClientGone(t *testing.T) {
	cat := catalog.New(catalog.Source{}, slog.New(slog.DiscardHandler))
	var logs bytes.Buffer
	rl := blockingReloader{started: make(chan struct{})}
	s := NewServer(cat, Options{AdminToken: "t", Reloader: rl}, slog.New(slog.NewJSONHandler(&logs, nil)))
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-rl.started; cancel() }()
	req := httptest.NewRequestWithContext(ctx, "POST", "/-/reload", nil)
	req.Header.Set("Authorization", "Bearer t")
	s.ServeHTTP(httptest.NewRecorder(), req)
	var line struct {
		Msg    string
		Status int
		Error  string
	}
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, logs.Bytes())
	}
	if line.Msg != "request" || line.Status != transport.StatusClientClosed || line.Error != context.Canceled.Error() {
		t.Errorf("logged %s; want status %d and the context's error", logs.Bytes(), transport.StatusClientClosed)
	}
}
