package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/export/targettest"
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
// --api-url only the two documents that link dynamic routes differ. The
// one exception is the type of a skill's HTML, SVG and XML files: serve
// sends theirs with a Content-Security-Policy that runs no script, which
// a bucket cannot store, so the export stores them as text to download
// (export.ArtifactType).
func TestExportEqualsServe(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	for name, body := range shippedFiles {
		fixture.WriteFile(t, filepath.Join(skills, "shipped-script", filepath.FromSlash(name)), body, 0o644)
	}
	fixture.WriteFile(t, filepath.Join(skills, "shipped-script", "SKILL.md"), skillDoc("shipped-script", ""), 0o644)
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
	active := 0
	for _, key := range slices.Sorted(maps.Keys(files)) {
		resp, body := ts.Get(t, urlPath(key))
		if resp.StatusCode != 200 || !bytes.Equal(body, files[key]) {
			t.Errorf("%s: serve answers %d with %d bytes that differ from the export's %d", key, resp.StatusCode, len(body), len(files[key]))
		}
		attrs, err := b.Attributes(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		ct := resp.Header.Get("Content-Type")
		document := key == ".well-known/api-catalog" || key == "openapi.yaml" || strings.HasSuffix(key, ".json")
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
	addr := fixture.FreePort(t)
	if err := os.Mkdir(filepath.Join(side, "meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	logs := startProcess(t, filepath.Join(side, "versitygw.log"), bin, "--access", access, "--secret", secret, "--port", addr, "--quiet", "posix", "--sidecar", filepath.Join(side, "meta"), root)
	fixture.Eventually(t, 30*time.Second, "versitygw listens", func() error {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return fmt.Errorf("%w (versitygw: %s)", err, logs())
		}
		resp.Body.Close()
		return nil
	})
	return "s3://skills?endpoint=http://" + addr + "&use_path_style=true&disable_https=true&region=us-east-1"
}

// s3Request is one request the export sent to the S3 server: its method
// and the object key ("" for the bucket itself, as a listing).
type s3Request struct{ method, key string }

// recordS3 puts a recording proxy on a loopback port in front of the S3
// server of bucketURL and returns the bucket URL through it, and a
// function that returns the requests since its last call.
func recordS3(t *testing.T, bucketURL string) (string, func() []s3Request) {
	t.Helper()
	u, err := url.Parse(bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	target, err := url.Parse(q.Get("endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []s3Request
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the client signed the Host it sent
		key := strings.TrimPrefix(strings.TrimPrefix(r.In.URL.Path, "/"+u.Host), "/")
		mu.Lock()
		seen = append(seen, s3Request{r.In.Method, key})
		mu.Unlock()
	}}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	q.Set("endpoint", srv.URL)
	u.RawQuery = q.Encode()
	return u.String(), func() []s3Request {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

// keysOf returns the sorted keys of the requests with one of methods.
func keysOf(reqs []s3Request, methods ...string) []string {
	var out []string
	for _, r := range reqs {
		if slices.Contains(methods, r.method) {
			out = append(out, r.key)
		}
	}
	slices.Sort(out)
	return out
}

// writesAndReads fails the test unless the requests wrote exactly the
// keys written (PUT, POST: multipart uploads; DELETE) and downloaded
// exactly the keys read (GET of an object; a listing has key "").
func writesAndReads(t *testing.T, what string, reqs []s3Request, written, read []string) {
	t.Helper()
	slices.Sort(written)
	slices.Sort(read)
	if got := slices.Compact(keysOf(reqs, http.MethodPut, http.MethodPost, http.MethodDelete)); !slices.Equal(got, written) {
		t.Errorf("%s wrote %q; want %q", what, got, written)
	}
	var got []string
	for _, k := range keysOf(reqs, http.MethodGet) {
		if k != "" {
			got = append(got, k)
		}
	}
	if !slices.Equal(got, read) {
		t.Errorf("%s downloaded %q; want %q", what, got, read)
	}
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

// checkBucket fails the test unless the bucket holds exactly the files
// of want (a folder export: slash path -> bytes) and the state file,
// each object with the Content-Type, Content-Disposition and
// Cache-Control of its kind of file (TestExportEqualsServe compares the
// types with serve's; export.ArtifactType stores a skill's HTML, SVG and
// XML as text to download) and no Content-Encoding.
func checkBucket(t *testing.T, b *blob.Bucket, want map[string][]byte) {
	t.Helper()
	keys := exportedKeys(t, b)
	for _, key := range keys {
		body, err := b.ReadAll(t.Context(), key)
		if w, ok := want[key]; err != nil || !ok || !bytes.Equal(body, w) {
			t.Errorf("object %s differs from the folder export (%v, in the export %v)", key, err, ok)
		}
		attrs, err := b.Attributes(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		wantCC, wantCT, wantCD := feed.CacheShort, feed.JSONContentType, ""
		switch {
		case strings.HasPrefix(key, "api/v1/blobs/"):
			wantCC = feed.CacheImmutable
			wantCT, wantCD = export.ArtifactType(feed.ContentType(key))
		case key == ".well-known/api-catalog":
			wantCT = feed.APICatalogContentType
		case key == "openapi.yaml":
			wantCT = feed.OpenAPIContentType
		case !strings.HasSuffix(key, ".json"):
			wantCT, wantCD = export.ArtifactType(feed.ContentType(key))
		}
		if attrs.CacheControl != wantCC || attrs.ContentType != wantCT || attrs.ContentDisposition != wantCD || attrs.ContentEncoding != "" {
			t.Errorf("%s: Content-Type %q, Cache-Control %q, Content-Disposition %q, Content-Encoding %q; want %q, %q, %q and none",
				key, attrs.ContentType, attrs.CacheControl, attrs.ContentDisposition, attrs.ContentEncoding, wantCT, wantCC, wantCD)
		}
	}
	if got := len(keys); got != len(want) {
		t.Errorf("the bucket holds %d objects, the folder export %d files", got, len(want))
	}
}

// The bucket form against a real S3 server: the objects are the folder
// export's, each with the Content-Type and Cache-Control serve sends, and
// a second export of the unchanged tree writes nothing at all, not even
// its state file, and downloads nothing but that file (the requests are
// recorded on their way to the server).
func TestExportToS3(t *testing.T) {
	bucketURL, requests := recordS3(t, startS3(t))
	skills, agents := exampleTree(t)
	base := "https://skills.example.com"
	dir := t.TempDir()
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", dir)
	want := exportedFiles(t, dir)
	first := runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", bucketURL)
	writesAndReads(t, "the first upload", requests(), append(slices.Collect(maps.Keys(want)), export.StateFile), []string{export.StateFile})
	if !strings.Contains(first, fmt.Sprintf("%d files", len(want))) || !strings.Contains(first, fmt.Sprintf("%d written (0 for metadata only)", len(want))) {
		t.Errorf("first upload: %s; want all %d files written", first, len(want))
	}
	again := runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", bucketURL)
	writesAndReads(t, "the second upload", requests(), nil, []string{export.StateFile})
	if !strings.Contains(again, " 0 written (0 for metadata only), "+strconv.Itoa(len(want))+" unchanged") {
		t.Errorf("second upload: %s; want nothing written", again)
	}
	checkBucket(t, openBucket(t, bucketURL), want)
}

// Objects whose bytes are right but whose attributes are not (uploaded by
// hand, by an older export, by a sync tool that drops metadata) are
// uploaded again, and only they: an artifact served as
// application/octet-stream without caching, an index cached as
// immutable, a document served as text/plain. (A stray Content-Encoding
// is tested on the file:// bucket in internal/export: versitygw 1.8.0
// keeps an object's Content-Encoding when a PUT without one replaces it,
// which S3 does not.)
func TestExportToS3CorrectsMetadata(t *testing.T) {
	direct := startS3(t)
	bucketURL, requests := recordS3(t, direct)
	skills, agents := exampleTree(t)
	base := "https://skills.example.com"
	dir := t.TempDir()
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", dir)
	want := exportedFiles(t, dir)
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", bucketURL)
	requests()

	b := openBucket(t, direct)
	var artifact string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if strings.HasPrefix(k, "api/v1/blobs/") && strings.HasSuffix(k, "/archive.zip") {
			artifact = k
			break
		}
	}
	if artifact == "" {
		t.Fatal("the export of the example tree holds no archive")
	}
	const index, manifest = ".well-known/agent-skills/index.json", "manifest.json"
	for key, opts := range map[string]*blob.WriterOptions{
		artifact: {ContentType: "application/octet-stream"},
		index:    {ContentType: feed.JSONContentType, CacheControl: feed.CacheImmutable},
		manifest: {ContentType: "text/plain; charset=utf-8", CacheControl: feed.CacheShort},
	} {
		if err := b.WriteAll(t.Context(), key, want[key], opts); err != nil {
			t.Fatal(err)
		}
	}

	out := runExport(t, "--skills", skills, "--agents", agents, "--base-url", base, "--out", bucketURL)
	writesAndReads(t, "the export after the tampering", requests(), []string{artifact, index, manifest}, []string{export.StateFile})
	if !strings.Contains(out, " 3 written (3 for metadata only), "+strconv.Itoa(len(want)-3)+" unchanged") {
		t.Errorf("export after the tampering: %s; want the 3 objects written for their metadata", out)
	}
	checkBucket(t, b, want)
}

// An artifact of 16 MiB or more is a multipart upload, whose ETag is no
// MD5: it is compared by the multipart ETag of its bytes, neither
// uploaded again nor downloaded by the next export.
func TestExportToS3LargeArtifact(t *testing.T) {
	bucketURL, requests := recordS3(t, startS3(t))
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "big", "SKILL.md"), skillDoc("big", "version: 1.0.0\n"))
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	for _, name := range []string{"a.bin", "b.bin"} {
		data := make([]byte, 9<<20) // each under max_file_bytes, incompressible
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		mustWrite(t, filepath.Join(skills, "big", name), string(data))
	}
	base := "https://skills.example.com"
	dir := t.TempDir()
	runExport(t, "--skills", skills, "--base-url", base, "--out", dir)
	want := exportedFiles(t, dir)
	var large []string
	for k, body := range want {
		if len(body) >= 16<<20 {
			large = append(large, k)
		}
	}
	if len(large) != 1 {
		t.Fatalf("%d files of 16 MiB or more in the export (%q); want the archive", len(large), large)
	}
	runExport(t, "--skills", skills, "--base-url", base, "--out", bucketURL)
	requests()
	b := openBucket(t, bucketURL)
	if a, err := b.Attributes(t.Context(), large[0]); err != nil || a.MD5 != nil {
		t.Fatalf("%s: attributes %+v (%v); want a multipart upload, with no MD5", large[0], a, err)
	}
	runExport(t, "--skills", skills, "--base-url", base, "--out", bucketURL)
	writesAndReads(t, "the second upload", requests(), nil, []string{export.StateFile})
	checkBucket(t, b, want)
}

// --prune-older-than on a bucket: what no document names stays while it
// is younger than the duration, then goes, and only it. The state file's
// record is moved two hours back rather than waiting.
func TestExportToS3Prune(t *testing.T) {
	direct := startS3(t)
	bucketURL, requests := recordS3(t, direct)
	skills := t.TempDir()
	for _, name := range []string{"alpha", "gone"} {
		mustWrite(t, filepath.Join(skills, name, "SKILL.md"), skillDoc(name, "version: 1.0.0\n"))
		mustWrite(t, filepath.Join(skills, name, "notes.md"), "notes of "+name+"\n")
	}
	base := "https://skills.example.com"
	runExport(t, "--skills", skills, "--base-url", base, "--out", bucketURL)
	before := exportedKeys(t, openBucket(t, direct))
	if err := os.RemoveAll(filepath.Join(skills, "gone")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runExport(t, "--skills", skills, "--base-url", base, "--out", dir)
	want := exportedFiles(t, dir)
	var stale []string
	for _, k := range before {
		if _, ok := want[k]; !ok {
			stale = append(stale, k)
		}
	}
	if len(stale) < 4 { // the archive, the scoped index, the item's documents
		t.Fatalf("removing a skill leaves %d objects unnamed (%q)", len(stale), stale)
	}
	requests()

	out := runExport(t, "--skills", skills, "--base-url", base, "--out", bucketURL, "--prune-older-than", "1h")
	if !strings.Contains(out, fmt.Sprintf("%d kept unnamed, 0 pruned", len(stale))) {
		t.Errorf("export after the removal: %s; want the %d unnamed objects kept", out, len(stale))
	}
	if got := keysOf(requests(), http.MethodDelete); len(got) != 0 {
		t.Errorf("the export after the removal deleted %q", got)
	}
	b := openBucket(t, direct)
	if got := exportedKeys(t, b); !slices.Equal(got, before) {
		t.Errorf("after the removal the bucket holds %q; want every object of the first export, %q", got, before)
	}

	// Two hours later (the record says so).
	var st struct {
		Keys    []string          `json:"keys"`
		Unnamed map[string]string `json:"unnamed_since"`
	}
	raw, err := b.ReadAll(t.Context(), export.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(st.Unnamed)); !slices.Equal(got, stale) {
		t.Fatalf("the state records %q as unnamed; want %q", got, stale)
	}
	for k := range st.Unnamed {
		st.Unnamed[k] = time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
	}
	raw, err = json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(t.Context(), export.StateFile, raw, nil); err != nil {
		t.Fatal(err)
	}

	out = runExport(t, "--skills", skills, "--base-url", base, "--out", bucketURL, "--prune-older-than", "1h")
	if !strings.Contains(out, fmt.Sprintf("0 kept unnamed, %d pruned", len(stale))) {
		t.Errorf("export two hours later: %s; want the %d unnamed objects pruned", out, len(stale))
	}
	writesAndReads(t, "the pruning export", requests(), append(slices.Clone(stale), export.StateFile), []string{export.StateFile})
	checkBucket(t, b, want)
}

// exportedKeys lists the bucket's keys but the state file, sorted.
func exportedKeys(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	var out []string
	for it := b.List(nil); ; {
		obj, err := it.Next(t.Context())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if obj.Key != export.StateFile {
			out = append(out, obj.Key)
		}
	}
	slices.Sort(out)
	return out
}

// TestREADMEExport runs README's export lines: the folder one as written
// (in a folder holding the example tree as ./skills and ./agents), the
// bucket one with its s3:// URL swapped for a file:// bucket, since the
// README's bucket does not exist.
func TestREADMEExport(t *testing.T) {
	skills, agents := exampleTree(t)
	lines := fixture.READMEShellLines(t, "../..", "skillserver export ")
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

// A file name that passes the file system of the tree can still be one an
// export cannot store: 255 bytes, the most a name may have there, is more
// than the names the export's targets write for it (the file:// driver's
// temporary file adds 21 bytes; the folder's used to add 5), and a path
// whose longest exported key is over 1,024 bytes is more than S3, GCS or
// Azure take. Each is a problem of its own skill, which validate names
// and serve and export leave out; the other skills are exported. Before,
// validate passed such a tree and export stopped at the file, exit 1, with
// no index written.
func TestExportLongFileName(t *testing.T) {
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "good", "SKILL.md"), skillDoc("good", "version: 1.0.0\n"))
	mustWrite(t, filepath.Join(skills, "good", "notes.md"), "notes\n")
	long := strings.Repeat("n", 252) + ".md" // 255 bytes
	mustWrite(t, filepath.Join(skills, "long-name", "SKILL.md"), skillDoc("long-name", "version: 1.0.0\n"))
	mustWrite(t, filepath.Join(skills, "long-name", long), "long name\n")
	// Five folders of 200 bytes: every name fits, the key does not.
	deep := strings.Repeat(strings.Repeat("d", 200)+"/", 5) + "x.md"
	mustWrite(t, filepath.Join(skills, "long-key", "SKILL.md"), skillDoc("long-key", "version: 1.0.0\n"))
	mustWrite(t, filepath.Join(skills, "long-key", filepath.FromSlash(deep)), "deep\n")

	code, out, errOut := runCmd(t, nil, "validate", "--skills", skills)
	if code != exitFailure {
		t.Errorf("validate exited %d; want %d for the two skills:\n%s%s", code, exitFailure, out, errOut)
	}
	for _, want := range []string{"long-name/" + long + ": resource-path: ", "long-key/" + deep + ": resource-path: "} {
		if !strings.Contains(out, want) {
			t.Errorf("validate does not name %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "good/") {
		t.Errorf("validate reports the good skill:\n%s", out)
	}

	base := "https://skills.example.com"
	for _, out := range []string{t.TempDir(), "file://" + filepath.ToSlash(t.TempDir())} {
		code, _, errOut := runCmd(t, nil, "export", "--skills", skills, "--base-url", base, "--out", out)
		if code != exitOK || !strings.Contains(errOut, "exported 1 skills") || !strings.Contains(errOut, "2 errors in the tree") {
			t.Errorf("export to %s exited %d; want 0, the good skill exported and the two others left out:\n%s", out, code, errOut)
		}
		idx, err := os.ReadFile(filepath.Join(strings.TrimPrefix(out, "file://"), ".well-known", "agent-skills", "index.json"))
		if err != nil || !bytes.Contains(idx, []byte(`"good"`)) || bytes.Contains(idx, []byte(`"long-`)) {
			t.Errorf("the index of the export to %s (%v); want the good skill only:\n%s", out, err, idx)
		}
	}
}

// Pruning never follows a symbolic link out of --out: an exported
// folder a link to outside has replaced (by whoever can write there)
// is not pruned through, the state file forgets the keys below it with a
// warning, and the export goes on, exit 0, as does the next. Before, the
// file:// bucket deleted the file behind the link, and the folder target
// refused to and failed, on every run until the state file was edited by
// hand.
func TestExportPruneDoesNotFollowLinks(t *testing.T) {
	for _, bucket := range []bool{false, true} {
		name := "folder"
		if bucket {
			name = "file:// bucket"
		}
		t.Run(name, func(t *testing.T) {
			skills := t.TempDir()
			for _, n := range []string{"alpha", "gone"} {
				mustWrite(t, filepath.Join(skills, n, "SKILL.md"), skillDoc(n, "version: 1.0.0\n"))
			}
			dir := t.TempDir()
			out := dir
			if bucket {
				out = "file://" + filepath.ToSlash(dir)
			}
			base := "https://skills.example.com"
			runExport(t, "--skills", skills, "--base-url", base, "--out", out)
			if err := os.RemoveAll(filepath.Join(skills, "gone")); err != nil {
				t.Fatal(err)
			}
			runExport(t, "--skills", skills, "--base-url", base, "--out", out)

			// The removed skill's folder becomes a link to a folder outside
			// --out holding a file at the key pruning will remove.
			const key = "skill/gone/.well-known/agent-skills/index.json"
			outside := t.TempDir()
			precious := filepath.Join(outside, ".well-known", "agent-skills", "index.json")
			mustWrite(t, precious, "not the export's\n")
			if err := os.RemoveAll(filepath.Join(dir, "skill", "gone")); err != nil {
				t.Fatal(err)
			}
			fixture.Symlink(t, outside, filepath.Join(dir, "skill", "gone"))
			// And an unnamed artifact becomes a link to a file outside.
			var st struct {
				Keys    []string          `json:"keys"`
				Unnamed map[string]string `json:"unnamed_since"`
			}
			statePath := filepath.Join(dir, export.StateFile)
			if err := json.Unmarshal(readBytes(t, statePath), &st); err != nil {
				t.Fatal(err)
			}
			if _, ok := st.Unnamed[key]; !ok {
				t.Fatalf("the state file does not record %s as unnamed: %v", key, st.Unnamed)
			}
			var artifact string
			for k := range st.Unnamed {
				if strings.HasPrefix(k, "api/v1/blobs/") {
					artifact = k
				}
			}
			if artifact == "" {
				t.Fatalf("no unnamed artifact in %v", st.Unnamed)
			}
			alsoPrecious := filepath.Join(outside, "artifact")
			mustWrite(t, alsoPrecious, "not the export's either\n")
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(artifact))); err != nil {
				t.Fatal(err)
			}
			fixture.Symlink(t, alsoPrecious, filepath.Join(dir, filepath.FromSlash(artifact)))
			for k := range st.Unnamed {
				st.Unnamed[k] = time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
			}
			raw, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, statePath, string(raw))

			errOut := runExport(t, "--skills", skills, "--base-url", base, "--out", out, "--prune-older-than", "1h")
			for _, p := range []string{precious, alsoPrecious} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("the prune removed %s, outside --out: %v", p, err)
				}
			}
			for _, k := range []string{key, artifact} {
				if !strings.Contains(errOut, "warning: ") || !strings.Contains(errOut, k) {
					t.Errorf("the prune does not warn of %s:\n%s", k, errOut)
				}
			}
			if !strings.Contains(errOut, "0 kept unnamed") {
				t.Errorf("the prune kept keys unnamed: %s", errOut)
			}
			if state := readBytes(t, statePath); bytes.Contains(state, []byte(key)) || bytes.Contains(state, []byte(artifact)) {
				t.Errorf("the state file still names the linked keys:\n%s", state)
			}
			again := runExport(t, "--skills", skills, "--base-url", base, "--out", out, "--prune-older-than", "1h")
			if strings.Contains(again, "warning") || !strings.Contains(again, "0 written") {
				t.Errorf("the next export: %s; want no warning and nothing written", again)
			}
		})
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestS3TargetContract: S3, through a real S3 server, keeps the contract
// every export target keeps (internal/export/targettest), as the folder
// and the file:// bucket do in internal/export's own tests.
func TestS3TargetContract(t *testing.T) {
	targettest.Run(t, startS3(t), targettest.Kind{Attributes: true})
}
