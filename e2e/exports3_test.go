//go:build e2e

package e2e

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/export/targettest"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/page"
)

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

// checkBucket fails the test unless the bucket holds exactly the files
// of want (a folder export: slash path -> bytes) and the state file,
// each object with the Content-Type, Content-Disposition and
// Cache-Control of its kind of file (TestExportEqualsServe compares the
// types with serve's; export.ArtifactType stores a skill's HTML, SVG and
// XML as text to download, while the catalogue's own pages and assets
// keep their types) and no Content-Encoding.
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
		case slices.Contains(feed.DocAICatalog.Patterns(), "/"+key):
			wantCT = feed.DocAICatalog.ContentType()
		case key == "openapi.yaml":
			wantCT = feed.OpenAPIContentType
		case key == export.HeadersFile:
			wantCT = export.HeadersContentType
		case strings.HasPrefix(key, "ui/assets/"): // the catalogue's own script and icon, named by their bytes
			wantCC, wantCT = feed.CacheImmutable, feed.ContentType(key)
		case key == "index.html" || strings.HasPrefix(key, "ui/") && strings.HasSuffix(key, "/index.html"):
			wantCT = page.ContentType // the catalogue's pages, rendered as serve renders them
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
	fixture.WriteFile(t, filepath.Join(skills, "big", "SKILL.md"), fixture.SkillDoc("big", "version: 1.0.0\n"), 0o644)
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	for _, name := range []string{"a.bin", "b.bin"} {
		data := make([]byte, 9<<20) // each under max_file_bytes, incompressible
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		fixture.WriteFile(t, filepath.Join(skills, "big", name), string(data), 0o644)
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
		fixture.WriteFile(t, filepath.Join(skills, name, "SKILL.md"), fixture.SkillDoc(name, "version: 1.0.0\n"), 0o644)
		fixture.WriteFile(t, filepath.Join(skills, name, "notes.md"), "notes of "+name+"\n", 0o644)
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

// TestS3TargetContract: S3, through a real S3 server, keeps the contract
// every export target keeps (internal/export/targettest), as the folder
// and the file:// bucket do in internal/export's own tests.
func TestS3TargetContract(t *testing.T) {
	targettest.Run(t, startS3(t), targettest.Kind{Attributes: true})
}
