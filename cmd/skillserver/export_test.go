package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
)

// runExport runs `skillserver export` with args and fails the test unless
// it exits 0.
func runExport(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	if code := run(t.Context(), append([]string{"export"}, args...), func(string) string { return "" }, io.Discard, &stderr); code != 0 {
		t.Fatalf("export %q exited %d:\n%s", args, code, stderr.String())
	}
	return stderr.String()
}

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
// --api-url only the two documents that link dynamic routes differ.
func TestExportEqualsServe(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	live, static := t.TempDir(), t.TempDir()
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", ts.URL, "--api-url", ts.URL, "--out", live)
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", ts.URL, "--out", static)

	files := exportedFiles(t, live)
	if len(files) < 50 {
		t.Fatalf("the export holds %d files", len(files))
	}
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		resp, body := ts.get(t, urlPath(key))
		if resp.StatusCode != 200 || !bytes.Equal(body, files[key]) {
			t.Errorf("%s: serve answers %d with %d bytes that differ from the export's %d", key, resp.StatusCode, len(body), len(files[key]))
		}
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

func TestExportUsage(t *testing.T) {
	skills, agents := exampleTree(t)
	for _, tt := range []struct {
		name    string
		args    []string
		message string
	}{
		{"no base URL", []string{"--out", t.TempDir()}, "--base-url is required"},
		{"no output", []string{"--base-url", "https://skills.example.com"}, "--out is required"},
		{"bad api URL", []string{"--base-url", "https://skills.example.com", "--out", t.TempDir(), "--api-url", "ftp://x"}, "export_api_url"},
		{"negative prune", []string{"--base-url", "https://skills.example.com", "--out", t.TempDir(), "--prune-older-than", "-1h"}, "export_prune_older_than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, nil, append([]string{"export", "--skills", skills, "--agents", agents}, tt.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tt.message) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.message)
			}
		})
	}
}

// nginxConf is the configuration docs/operations.md recommends for an
// export, on a loopback port, everything in dir.
const nginxConf = `daemon off;
user %[4]s;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log stderr;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %[1]s/tmp;
    proxy_temp_path %[1]s/tmp;
    fastcgi_temp_path %[1]s/tmp;
    uwsgi_temp_path %[1]s/tmp;
    scgi_temp_path %[1]s/tmp;
    types {
        application/json json;
        text/markdown md;
        application/zip zip;
        application/yaml yaml;
        image/png png;
        text/x-shellscript sh;
    }
    default_type application/octet-stream;
    charset utf-8;
    charset_types application/json text/markdown text/x-shellscript;
    server {
        listen %[2]s;
        root %[3]s;
        location = /.well-known/api-catalog { default_type application/linkset+json; add_header Cache-Control "public, max-age=30"; }
        location ^~ /api/v1/blobs/ { add_header Cache-Control "public, max-age=31536000, immutable"; }
        location = /.skillserver-export.json { return 404; }
        location / { add_header Cache-Control "public, max-age=30"; }
    }
}
`

// startNginx picks a loopback port, runs fill with the base URL there (to
// write dir, which must know it), then serves dir with the real nginx on
// that port; the process is stopped by its pid at cleanup.
func startNginx(t *testing.T, dir string, fill func(base string)) string {
	t.Helper()
	bin := nginxBinary(t)
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	base := "http://" + addr
	fill(base)
	conf := filepath.Join(work, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, work, addr, dir, currentUser(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := startProcess(t, filepath.Join(work, "nginx.log"), bin, "-p", work, "-c", conf)
	eventually(t, 20*time.Second, "nginx answers", func() error {
		resp, err := http.Get(base + "/manifest.json")
		if err != nil {
			return fmt.Errorf("%w (nginx: %s)", err, logs())
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("manifest.json: %s (nginx: %s)", resp.Status, logs())
		}
		return nil
	})
	return base
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

// currentUser is the name of the user the test runs as: nginx's workers
// run as that user, so they can read the test's folders.
func currentUser(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
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
	var idx rfcIndex
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
		syncPass(t, c)
		if len(c.Skills) != len(idx.Skills) || len(c.Agents) != 2 {
			t.Errorf("synced %d skills and %d sub-agents, want %d and 2", len(c.Skills), len(c.Agents), len(idx.Skills))
		}
		resyncDownloadsNothing(t, c)
	})
	t.Run("check", func(t *testing.T) {
		// The conformance walk finds nothing wrong with the export as
		// nginx serves it: no error and no warning.
		if code, r := checkJSON(t, base); code != exitOK || len(r.Findings) != 0 {
			t.Errorf("check of the export behind nginx: exit %d, findings %v", code, findings(r))
		}
	})
}

// versitygwModule is the S3 server the bucket test runs: an Apache-2.0 S3
// gateway over a folder, built from its Go module (.ci/run installs it).
const versitygwModule = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// startS3 runs a real S3 server (versitygw's posix backend) on a loopback
// port with one bucket, and returns the gocloud.dev/blob URL of that
// bucket; AWS credentials for it are set in the environment.
func startS3(t *testing.T) string {
	t.Helper()
	if os.Getenv("SKILLSERVER_S3_TEST") != "1" {
		t.Skip("S3 bucket test; enable with SKILLSERVER_S3_TEST=1 after `GOBIN=/usr/local/bin go install " + versitygwModule + "` (.ci/run does both)")
	}
	bin, err := exec.LookPath("versitygw")
	if err != nil {
		t.Fatalf("SKILLSERVER_S3_TEST=1 but versitygw is not on PATH; install it with `GOBIN=/usr/local/bin go install %s`: %v", versitygwModule, err)
	}
	root, side := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	const access, secret = "skillserver-test", "skillserver-test-secret"
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "us-east-1",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": filepath.Join(side, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(side, "none"),
	} {
		t.Setenv(k, v)
	}
	addr := freePort(t)
	if err := os.Mkdir(filepath.Join(side, "meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	logs := startProcess(t, filepath.Join(side, "versitygw.log"), bin, "--access", access, "--secret", secret, "--port", addr, "--quiet", "posix", "--sidecar", filepath.Join(side, "meta"), root)
	eventually(t, 30*time.Second, "versitygw listens", func() error {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return fmt.Errorf("%w (versitygw: %s)", err, logs())
		}
		resp.Body.Close()
		return nil
	})
	return "s3://skills?endpoint=http://" + addr + "&use_path_style=true&disable_https=true&region=us-east-1"
}

// The bucket form against a real S3 server: the objects are the folder
// export's, each with the Content-Type and Cache-Control serve sends, and
// a second export uploads nothing.
func TestExportToS3(t *testing.T) {
	bucketURL := startS3(t)
	skills, agents := exampleTree(t)
	base := "https://skills.example.com"
	dir := t.TempDir()
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", dir)
	first := runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", bucketURL)
	again := runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", bucketURL)
	want := exportedFiles(t, dir)
	if !strings.Contains(first, fmt.Sprintf("%d files", len(want))) || !strings.Contains(first, fmt.Sprintf("%d written", len(want))) {
		t.Errorf("first upload: %s; want all %d files written", first, len(want))
	}
	if !strings.Contains(again, " 0 written") {
		t.Errorf("second upload: %s; want nothing written", again)
	}

	b, err := blob.OpenBucket(t.Context(), bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := 0
	for it := b.List(nil); ; {
		obj, err := it.Next(t.Context())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if obj.Key == export.StateFile {
			continue
		}
		got++
		body, err := b.ReadAll(t.Context(), obj.Key)
		if err != nil || !bytes.Equal(body, want[obj.Key]) {
			t.Errorf("object %s differs from the folder export (%v)", obj.Key, err)
		}
		attrs, err := b.Attributes(t.Context(), obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		wantCC, wantCT := feed.CacheShort, feed.JSONContentType
		switch {
		case strings.HasPrefix(obj.Key, "api/v1/blobs/"):
			wantCC, wantCT = feed.CacheImmutable, feed.ContentType(obj.Key)
		case obj.Key == ".well-known/api-catalog":
			wantCT = feed.APICatalogContentType
		case obj.Key == "openapi.yaml":
			wantCT = feed.OpenAPIContentType
		case !strings.HasSuffix(obj.Key, ".json"):
			wantCT = feed.ContentType(obj.Key)
		}
		if attrs.CacheControl != wantCC || attrs.ContentType != wantCT {
			t.Errorf("%s: Content-Type %q, Cache-Control %q; want %q, %q", obj.Key, attrs.ContentType, attrs.CacheControl, wantCT, wantCC)
		}
	}
	if got != len(want) {
		t.Errorf("the bucket holds %d objects, the folder export %d files", got, len(want))
	}
}

// TestREADMEExport runs README's export lines: the folder one as written
// (in a folder holding the example tree as ./skills and ./agents), the
// bucket one with its s3:// URL swapped for a file:// bucket, since the
// README's bucket does not exist.
func TestREADMEExport(t *testing.T) {
	skills, agents := exampleTree(t)
	lines := readmeShellLines(t, "skillserver export ")
	cwd := t.TempDir()
	t.Chdir(cwd)
	fixture.Symlink(t, skills, filepath.Join(cwd, "skills"))
	fixture.Symlink(t, agents, filepath.Join(cwd, "agents"))
	bucket := filepath.Join(cwd, "bucket")
	if err := os.Mkdir(bucket, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		line = regexp.MustCompile(`'s3://[^']*'`).ReplaceAllString(line, "file://"+bucket)
		runExport(t, strings.Fields(line)[2:]...)
	}
	for _, dir := range []string{filepath.Join(cwd, "public"), bucket} {
		if _, err := os.Stat(filepath.Join(dir, ".well-known", "agent-skills", "index.json")); err != nil {
			t.Errorf("after README's export lines: %v", err)
		}
	}
}
