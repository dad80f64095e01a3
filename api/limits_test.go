package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/httpapi"
	"github.com/skillserver/skillserver/internal/skill"
)

// TestConfiguredLimitsStayInSchemas: a server configured above the
// default max_search_results and max_update_checks (100) answers, and is
// asked, within the published schemas. Before, they said maxItems 100,
// so every such server broke its own contract for a validating client.
func TestConfiguredLimitsStayInSchemas(t *testing.T) {
	const n, limit = 130, 150
	dir := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("skill-%03d", i)
		body := fmt.Sprintf("---\nname: %s\ndescription: Skill number %d for the limits test.\n---\n\n# %s\n", name, i, name)
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, skill.FileName), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	cat := catalog.New(catalog.Source{SkillsDir: dir}, log)
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(cat, httpapi.Options{BaseURL: "https://skills.example.com", MaxSearchResults: limit, MaxUpdateChecks: limit}, log)
	srv.SetReady(true)
	schemas := loadSchemas(t)

	var checks []map[string]string
	for i := range n {
		checks = append(checks, map[string]string{"name": fmt.Sprintf("skill-%03d", i), "version": "0.0.1"})
	}
	request, err := json.Marshal(checks)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas["check-updates-request"].Validate(mustDecode(t, request)); err != nil {
		t.Errorf("a request of %d checks, which the server takes, does not match check-updates-request.schema.json:\n%v", n, err)
	}
	for _, tc := range []struct {
		method, target, schema string
		body                   []byte
	}{
		{"GET", fmt.Sprintf("/api/v1/skills?take=%d", limit), "search-results", nil},
		{"GET", fmt.Sprintf("/api/search?q=skill&limit=%d", limit), "find-results", nil},
		{"POST", "/api/v1/skills/check-updates", "check-updates-response", request},
	} {
		req := httptest.NewRequest(tc.method, tc.target, bytes.NewReader(tc.body))
		if tc.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", tc.method, tc.target, rec.Code, rec.Body)
		}
		if items := strings.Count(rec.Body.String(), `"name":`); items < n {
			t.Fatalf("%s %s: %d items, want %d (above the default of 100)", tc.method, tc.target, items, n)
		}
		if err := schemas[tc.schema].Validate(mustDecode(t, rec.Body.Bytes())); err != nil {
			t.Errorf("%s %s does not match %s.schema.json:\n%v", tc.method, tc.target, tc.schema, err)
		}
	}
}

func mustDecode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
