//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"gocloud.dev/blob"
	"golang.org/x/net/html"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/fixture"

	"github.com/skillserver/skillserver/internal/check/checktest"
)

// exportedFiles reads an export folder: slash path -> bytes, without the
// export's state file.
func exportedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	return fixture.ReadTree(t, dir, func(rel string) bool { return rel == export.StateFile })
}

// urlPath is the URL path of an exported file.
func urlPath(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(segs, "/")
}

// Every file of an export equals, byte for byte and with its Content-Type,
// what serve answers at that path for the same tree and base URL; without
// --api-url only the two documents that link dynamic routes differ. The
// one exception is the type of a skill's HTML, SVG and XML files: serve
// sends theirs with a Content-Security-Policy that runs no script, which
// a bucket cannot store, so the export stores them as text to download
// (export.ArtifactType).
func TestExportEqualsServe(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, repoRoot)
	for name, body := range shippedFiles {
		fixture.WriteFile(t, filepath.Join(skills, "shipped-script", filepath.FromSlash(name)), body, 0o644)
	}
	fixture.WriteFile(t, filepath.Join(skills, "shipped-script", "SKILL.md"), fixture.SkillDoc("shipped-script", ""), 0o644)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	live, static, bucketDir := t.TempDir(), t.TempDir(), t.TempDir()
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", ts.URL, "--api-url", ts.URL, "--out", live)
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", ts.URL, "--out", static)
	// A bucket export carries each file's Content-Type (a folder has none).
	bucketURL := "file://" + filepath.ToSlash(bucketDir)
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", ts.URL, "--api-url", ts.URL, "--out", bucketURL)
	b := openBucket(t, bucketURL)

	files := exportedFiles(t, live)
	if len(files) < 50 {
		t.Fatalf("the export holds %d files", len(files))
	}
	active, pages := 0, 0
	for _, key := range slices.Sorted(maps.Keys(files)) {
		if key == export.HeadersFile {
			continue // for the static hosts that read it; serve sends its headers itself
		}
		if pagePath, ok := exportedPage(key); ok {
			pages++
			resp, body := getPage(t, ts.URL+pagePath)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("%s: serve answers %s %d", pagePath, resp.Header.Get("Content-Type"), resp.StatusCode)
				continue
			}
			if got, want := withoutLive(t, files[key]), withoutLive(t, body); got != want {
				t.Errorf("%s: the exported page differs from serve's %s beyond what needs a live server:\n%s", key, pagePath, firstDiff(got, want))
			}
			continue
		}
		resp, body := ts.Get(t, urlPath(key))
		if resp.StatusCode != 200 || !bytes.Equal(body, files[key]) {
			t.Errorf("%s: serve answers %d with %d bytes that differ from the export's %d", key, resp.StatusCode, len(body), len(files[key]))
		}
		attrs, err := b.Attributes(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		ct := resp.Header.Get("Content-Type")
		// The pages' own assets keep their types: they are not a skill's.
		document := key == ".well-known/api-catalog" || key == "openapi.yaml" || strings.HasSuffix(key, ".json") || strings.HasPrefix(key, "ui/assets/")
		if inert, disposition := export.ArtifactType(ct); !document && disposition != "" {
			if csp := resp.Header.Get("Content-Security-Policy"); csp != "default-src 'none'; sandbox" {
				t.Errorf("%s: serve sends %s with Content-Security-Policy %q; want the sandbox", key, ct, csp)
			}
			ct = inert
			active++
		}
		if attrs.ContentType != ct {
			t.Errorf("%s: the export's Content-Type is %q, serve's %q", key, attrs.ContentType, ct)
		}
	}
	if active != 4 { // pwn.html and pwn.svg, each an artifact and a latest file
		t.Errorf("%d exported files of a type a browser runs script in; want 4", active)
	}
	if pages < 30 {
		t.Errorf("%d exported pages; want the catalogue's", pages)
	}

	staticFiles := exportedFiles(t, static)
	var differ []string
	for k, b := range files {
		if s, ok := staticFiles[k]; !ok || !bytes.Equal(s, b) {
			differ = append(differ, k)
		}
	}
	slices.Sort(differ)
	if got := strings.Join(differ, ","); got != ".well-known/api-catalog,manifest.json" || len(staticFiles) != len(files) {
		t.Errorf("without --api-url, these differ: %s (%d files against %d); want only the API catalog and the manifest", got, len(staticFiles), len(files))
	}
	for _, doc := range []string{"manifest.json", ".well-known/api-catalog"} {
		for _, route := range []string{"/api/v1/skills", "/health"} {
			if bytes.Contains(staticFiles[doc], []byte(route)) {
				t.Errorf("%s of a static export links %s:\n%s", doc, route, staticFiles[doc])
			}
		}
	}
}

// exportedPage is the URL path of the catalogue page an exported key
// holds: the catalogue's index.html, or the index.html of a page's
// folder under /ui/ (not an asset).
func exportedPage(key string) (string, bool) {
	switch {
	case key == "index.html":
		return "/", true
	case strings.HasPrefix(key, "ui/") && !strings.HasPrefix(key, "ui/assets/") && strings.HasSuffix(key, "/index.html"):
		return urlPath(strings.TrimSuffix(key, "/index.html")), true
	}
	return "", false
}

// withoutLive is a page with what only a running server shows taken
// out: the elements serve marks data-live, and the attribute that
// points an export's catalogue filter at the RFC index; rendered again,
// so that both sides are written alike.
func withoutLive(t *testing.T, page []byte) string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var drop []*html.Node
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		n.Attr = slices.DeleteFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "data-filter" })
		if slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "data-live" }) {
			drop = append(drop, n)
		}
	}
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
	var b bytes.Buffer
	if err := html.Render(&b, doc); err != nil {
		t.Fatal(err)
	}
	// Dropping an element leaves the line breaks around it.
	return regexp.MustCompile(`\n+`).ReplaceAllString(b.String(), "\n")
}

// getPage GETs u as a browser asks for a page.
func getPage(t *testing.T, u string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// firstDiff shows where a and b part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("export: %q\nserve:  %q", a[max(0, i-80):min(len(a), i+120)], b[max(0, i-80):min(len(b), i+120)])
}

// exportLocations are the headers docs/operations.md recommends for an
// export served by nginx (TestBrowserExportRunsNoScript runs that
// configuration as the docs write it).
const exportLocations = `location = /.well-known/api-catalog { default_type application/linkset+json; add_header Cache-Control "public, max-age=30"; ` + securityHeaders + ` }
    location ^~ /api/v1/blobs/ { add_header Cache-Control "public, max-age=31536000, immutable"; ` + securityHeaders + ` }
    location = /.skillserver-export.json { return 404; }
    location / { add_header Cache-Control "public, max-age=30"; ` + securityHeaders + ` }`

// securityHeaders are serve's headers for a skill's files, in nginx.
const securityHeaders = `add_header Content-Security-Policy "default-src 'none'; sandbox" always; add_header X-Content-Type-Options nosniff always;`

// startNginx serves dir with the real nginx on a loopback port, as
// docs/operations.md recommends, after fill has written dir for the base
// URL there (the export must know it).
func startNginx(t *testing.T, dir string, fill func(base string)) string {
	t.Helper()
	s := &site{root: dir, extra: exportLocations}
	startStaticHosts(t, []*site{s})
	fill(s.url)
	return s.url
}

// startProcess starts bin with args, its output in the file logPath (not
// a pipe: Wait then never waits for a child that still holds one), and
// stops it at cleanup with SIGTERM, which also stops nginx's workers
// (SIGKILL would leave them running), then reaps it. It returns a
// function reading the log so far.
func startProcess(t *testing.T, logPath, bin string, args ...string) (logs func() string) {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	return func() string { b, _ := os.ReadFile(logPath); return string(b) }
}

// An export behind real nginx: the skills CLI installs every skill from
// it, one skill from its scoped URL, and the netclaw sync model walks it
// (downloading nothing on a second pass); artifacts are immutable there.
func TestExportBehindNginx(t *testing.T) {
	npx := requireInterop(t)
	skillsRoot, agents := exampleTree(t)
	dir := t.TempDir()
	base := startNginx(t, dir, func(base string) {
		runExport(t, "--skills", skillsRoot, "--agents", agents, "--base-url", base, "--out", dir)
	})

	resp, err := http.Get(base + "/.well-known/agent-skills/index.json")
	if err != nil {
		t.Fatal(err)
	}
	var idx fixture.RFCIndex
	err = json.NewDecoder(resp.Body).Decode(&idx)
	resp.Body.Close()
	if err != nil || len(idx.Skills) == 0 {
		t.Fatalf("index behind nginx: %v, %d skills", err, len(idx.Skills))
	}
	a, err := http.Get(idx.Skills[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	a.Body.Close()
	if cc := a.Header.Get("Cache-Control"); a.StatusCode != 200 || cc != "public, max-age=31536000, immutable" {
		t.Errorf("artifact %s behind nginx: %s, Cache-Control %q", idx.Skills[0].URL, a.Status, cc)
	}

	t.Run("skills add", func(t *testing.T) {
		cwd := t.TempDir()
		out, err := skillsCLI(t, npx, cwd, "add", base, "-y", "-a", "universal", "--skill", "*")
		if err != nil {
			t.Fatalf("skills add: %v\n%s", err, out)
		}
		root := filepath.Join(cwd, ".agents", "skills")
		installed, err := installedNames(root)
		var names []string
		for _, s := range idx.Skills {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		if err != nil || !slices.Equal(installed, names) {
			t.Fatalf("installed %v (%v), want %v\n%s", installed, err, names, out)
		}
		for _, s := range idx.Skills {
			checkInstalled(t, skillsRoot, filepath.Join(root, s.Name), s.Name, s.Version)
		}
	})
	t.Run("skills add one skill by URL", func(t *testing.T) {
		cwd := t.TempDir()
		out, err := skillsCLI(t, npx, cwd, "add", base+"/skill/k8s-deploy", "-y", "-a", "universal")
		if err != nil {
			t.Fatalf("skills add: %v\n%s", err, out)
		}
		root := filepath.Join(cwd, ".agents", "skills")
		if installed, err := installedNames(root); err != nil || !slices.Equal(installed, []string{"k8s-deploy"}) {
			t.Fatalf("installed %v (%v), want k8s-deploy only\n%s", installed, err, out)
		}
		checkInstalled(t, skillsRoot, filepath.Join(root, "k8s-deploy"), "k8s-deploy", "1.2.0")
	})
	t.Run("sync", func(t *testing.T) {
		c := check.New(base)
		checktest.SyncPass(t, c)
		if len(c.Skills) != len(idx.Skills) || len(c.Agents) != 2 {
			t.Errorf("synced %d skills and %d sub-agents, want %d and 2", len(c.Skills), len(c.Agents), len(idx.Skills))
		}
		checktest.ResyncDownloadsNothing(t, c)
	})
	t.Run("check", func(t *testing.T) {
		// The conformance walk finds nothing wrong with the export as
		// nginx serves it: no error and no warning.
		if code, r := checkJSON(t, base); code != exitOK || len(r.Findings) != 0 {
			t.Errorf("check of the export behind nginx: exit %d, findings %v", code, findings(r))
		}
	})
}

// openBucket opens a gocloud.dev/blob bucket, closed at cleanup.
func openBucket(t *testing.T, bucketURL string) *blob.Bucket {
	t.Helper()
	b, err := blob.OpenBucket(t.Context(), bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
