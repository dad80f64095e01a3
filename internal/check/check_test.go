package check

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

type zipEntry struct {
	name string
	mode os.FileMode
	body []byte
}

func buildZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(e.mode)
		f, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCheckZip: each archive breaks one rule clients apply, and CheckZip
// names it.
func TestCheckZip(t *testing.T) {
	md := zipEntry{"SKILL.md", 0o644, []byte("---\nname: a\ndescription: d\n---\n")}
	many := []zipEntry{md}
	for i := range MaxArchiveFiles {
		many = append(many, zipEntry{fmt.Sprintf("f/%d.txt", i), 0o644, nil})
	}
	tests := []struct {
		name string
		zip  []byte
		want Rule // "" for none
	}{
		{"valid", buildZip(t, md, zipEntry{"scripts/run.sh", 0o755, []byte("echo\n")}), ""},
		{"symlink", buildZip(t, md, zipEntry{"link", os.ModeSymlink | 0o777, []byte("/etc/passwd")}), RuleZipEntry},
		{"absolute", buildZip(t, md, zipEntry{"/etc/cron.d/x", 0o644, nil}), RuleZipPath},
		{"dot dot", buildZip(t, md, zipEntry{"a/../../x", 0o644, nil}), RuleZipPath},
		{"backslash", buildZip(t, md, zipEntry{`..\x`, 0o644, nil}), RuleZipPath},
		{"equal ignoring case", buildZip(t, md, zipEntry{"skill.MD", 0o644, nil}), RuleZipPath},
		{"too many entries", buildZip(t, many...), RuleZipSize},
		{"expands too far", buildZip(t, md, zipEntry{"zeros.bin", 0o644, make([]byte, MaxArchiveBytes+1)}), RuleZipSize},
		{"not a zip", []byte("PK? no"), RuleZipSize},
		{"text not UTF-8", buildZip(t, md, zipEntry{"notes.md", 0o644, []byte{0xff, 0xfe}}), RuleZipContent},
		{"no SKILL.md", buildZip(t, zipEntry{"README.md", 0o644, nil}), RuleZipContent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := CheckZip(tt.zip)
			switch {
			case tt.want == "" && (err != nil || files["SKILL.md"] == nil):
				t.Errorf("valid archive: %v", err)
			case tt.want != "" && !hasRule(err, tt.want):
				t.Errorf("err = %v, want a %s violation", err, tt.want)
			}
		})
	}
}

// TestRunBounds: a response over MaxBytes and a Content-Encoding the
// request did not accept are errors of the document they hit.
func TestRunBounds(t *testing.T) {
	big := index(`{"name":"a","type":"skill-md","description":"` + strings.Repeat("d", 900) + `","url":"{base}/a.md","digest":"sha256:` + strings.Repeat("0", 64) + `","version":"1"}`)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		opts    Options
		want    string // "severity rule item" of the RFC index's finding
	}{
		{"over max bytes", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/.well-known/agent-skills/index.json" {
				w.Write(big)
				return
			}
			http.NotFound(w, r)
		}, Options{MaxBytes: 512}, "error size RFC index"},
		{"encoded without asking", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/.well-known/agent-skills/index.json" {
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(index(""))
				return
			}
			http.NotFound(w, r)
		}, Options{}, "error encoding RFC index"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			tt.opts.URL = srv.URL
			r, err := Run(t.Context(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Findings {
				got = append(got, string(f.Severity)+" "+string(f.Rule)+" "+f.Item)
			}
			if r.OK || !slices.Contains(got, tt.want) {
				t.Errorf("ok %v, findings %q; want %q", r.OK, got, tt.want)
			}
		})
	}
}

// TestRunRejectsOptions: what Run cannot start from is ErrUsage.
func TestRunRejectsOptions(t *testing.T) {
	for _, o := range []Options{{URL: "ftp://x"}, {URL: "http://x/?a=b"}, {URL: "http://x", Concurrency: -1}, {URL: "http://x", Timeout: -1}} {
		if _, err := Run(t.Context(), o); err == nil || !strings.Contains(err.Error(), ErrUsage.Error()) {
			t.Errorf("%+v: err = %v, want ErrUsage", o, err)
		}
	}
}

// TestRulesAreDocumented: the report schema's rule enum and
// docs/check.md name exactly the rules there are.
func TestRulesAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../api/schemas/check-report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Findings struct {
				Items struct {
					Properties struct {
						Rule struct {
							Enum []Rule `json:"enum"`
						} `json:"rule"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"findings"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	if enum := schema.Properties.Findings.Items.Properties.Rule.Enum; !slices.Equal(enum, Rules()) {
		t.Errorf("check-report.schema.json rules %q, want %q", enum, Rules())
	}
	f, err := os.Open("../../docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		row := fmt.Sprintf("| `%s` | %s |", r, r.Severity())
		if !bytes.Contains(doc, []byte(row)) {
			t.Errorf("docs/check.md has no row %q", row)
		}
	}
}

// A finding met twice (one URL reached from two documents) is listed and
// counted once.
func TestReportCountsWhatItLists(t *testing.T) {
	v := &Violation{Rule: RuleStatus, Item: "skill x", URL: "http://h/x", Msg: "GET answered 404, want 200"}
	w := &Violation{Rule: RuleHead, Item: "skill x", URL: "http://h/x", Msg: "HEAD differs"}
	r := newReport("http://h", Summary{}, []*Violation{v, v, w, w}, "")
	if len(r.Findings) != 2 || r.Summary.Errors != 1 || r.Summary.Warnings != 1 || r.OK {
		t.Errorf("findings %+v, summary %+v, ok %v; want one error and one warning", r.Findings, r.Summary, r.OK)
	}
}

// TestRunUnreachable: a feed nothing answers at is one finding that says
// so, not one connection error per document the walks would have read.
func TestRunUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	rep, err := Run(t.Context(), Options{URL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.OK {
		t.Fatalf("findings %+v, ok %v: want one error", rep.Findings, rep.OK)
	}
	f := rep.Findings[0]
	if f.Rule != RuleFetch || !strings.Contains(f.Message, "nothing answers at this address") || !strings.Contains(f.Message, "connection refused") {
		t.Errorf("finding %+v: want a fetch error saying nothing answers, with the cause", f)
	}
	if rep.Summary.Requests != 1 {
		t.Errorf("%d requests, want 1: the walks went on after the first could not connect", rep.Summary.Requests)
	}
}

// TestBaseWithoutScheme: a URL given as host:port says what to add,
// not what Go's URL parser thinks of it.
func TestBaseWithoutScheme(t *testing.T) {
	for _, raw := range []string{"127.0.0.1:8080", "localhost:8080/t/x", "skills.example.com"} {
		_, err := FeedBase(raw)
		if err == nil || !strings.Contains(err.Error(), "add http:// or https:// (http://"+raw+")") {
			t.Errorf("Base(%q): %v", raw, err)
		}
	}
	if got, err := FeedBase("http://127.0.0.1:8080/"); err != nil || got != "http://127.0.0.1:8080" {
		t.Errorf("Base of a good URL: %q, %v", got, err)
	}
}
