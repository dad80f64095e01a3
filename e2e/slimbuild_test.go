//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/fixture"
)

// slimAlone copies TestMain's skillserver, built without the bucket
// drivers, into dir, alone: no skillserver-export beside it.
func slimAlone(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(skillserverBin())
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "skillserver")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestBuildWithoutBucketDrivers builds the binary with every optional
// bucket driver left out by its tag (docs/operations.md, "Smaller
// builds"), alone in its folder: it still serves, and still exports into
// a folder and a file:// bucket, while a bucket URL whose driver is
// missing is refused with a message naming the tag and the full build to
// run instead, not gocloud's "no driver registered".
func TestBuildWithoutBucketDrivers(t *testing.T) {
	dir := t.TempDir()
	bin := slimAlone(t, dir)
	skills, agents := exampleTree(t)
	export := func(out string) (int, string) {
		return runBinary(t, bin, "export", "--skills", skills, "--agents", agents, "--base-url", "https://skills.example.com", "--out", out)
	}
	for scheme, tag := range map[string]string{"s3": "no_s3blob", "gs": "no_gcsblob", "azblob": "no_azureblob"} {
		code, stderr := export(scheme + "://some-bucket")
		if code != exitFailure || !strings.Contains(stderr, "built with -tags "+tag) || !strings.Contains(stderr, scheme+"://") || !strings.Contains(stderr, fullBuild) {
			t.Errorf("export to %s:// without its driver: exit %d, stderr %q; want 1 naming %s and %s", scheme, code, stderr, tag, fullBuild)
		}
	}
	folder := filepath.Join(dir, "out")
	if code, stderr := export(folder); code != 0 {
		t.Errorf("export to a folder: exit %d: %s", code, stderr)
	}
	bucket := filepath.Join(dir, "bucket")
	if err := os.Mkdir(bucket, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, stderr := export("file://" + filepath.ToSlash(bucket)); code != 0 {
		t.Errorf("export to a file:// bucket: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(bucket, ".well-known", "agent-skills", "index.json")); err != nil {
		t.Errorf("the file:// bucket has no RFC index: %v", err)
	}
}

// TestSlimBuildRunsTheFullBuild: skillserver built without the bucket
// drivers, with skillserver-export beside it (as in the release archive
// and the image), runs skillserver-export for an export into a bucket it
// has no driver for, with the same arguments, and exits with its status;
// it exports into a folder and a file:// bucket itself. It finds the full
// build through a symbolic link to itself too. A stand-in for the full
// build records how it was run.
func TestSlimBuildRunsTheFullBuild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in for the full build is a shell script")
	}
	dir := t.TempDir()
	bin := slimAlone(t, dir)
	record := filepath.Join(t.TempDir(), "args")
	stub := "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\" > '" + record + "'\necho 'the full build ran' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, fullBuild), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "skillserver")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	skills, agents := exampleTree(t)
	for _, target := range []string{bin, link} {
		for _, out := range []string{"s3://bucket?region=eu-west-1", "gs://bucket", "azblob://container"} {
			os.Remove(record)
			args := []string{"export", "--skills", skills, "--agents", agents, "--base-url", "https://skills.example.com", "--out", out}
			code, stderr := runBinary(t, target, args...)
			got, _ := os.ReadFile(record)
			want := strings.Join(append([]string{filepath.Join(dir, fullBuild)}, args...), "\n") + "\n"
			if code != 3 || !strings.Contains(stderr, "the full build ran") || string(got) != want {
				t.Errorf("%s export --out %s: exit %d, stderr %q, the full build ran as %q; want exit 3 from the full build run as %q", target, out, code, stderr, got, want)
			}
		}
	}
	os.Remove(record)
	folder := filepath.Join(t.TempDir(), "out")
	if code, stderr := runBinary(t, bin, "export", "--skills", skills, "--base-url", "https://skills.example.com", "--out", folder); code != 0 {
		t.Errorf("export to a folder: exit %d: %s", code, stderr)
	}
	bucket := t.TempDir()
	if code, stderr := runBinary(t, bin, "export", "--skills", skills, "--base-url", "https://skills.example.com", "--out", "file://"+filepath.ToSlash(bucket)); code != 0 {
		t.Errorf("export to a file:// bucket: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(record); err == nil {
		t.Error("the full build ran for a folder or a file:// bucket")
	}
}

// TestSlimBuildExportsToS3 is the release archive's layout against a real
// S3 server: skillserver, built without the drivers, exports into the
// bucket through skillserver-export, the full build beside it, and the
// bucket then holds what a folder export holds.
func TestSlimBuildExportsToS3(t *testing.T) {
	bucketURL := startS3(t)
	bin := skillserverBin() // with skillserver-export beside it
	skills, agents := exampleTree(t)
	folder := t.TempDir()
	base := "https://skills.example.com"
	if code, stderr := runBinary(t, bin, "export", "--skills", skills, "--agents", agents, "--base-url", base, "--out", folder); code != 0 {
		t.Fatalf("export to a folder: exit %d: %s", code, stderr)
	}
	code, stderr := runBinary(t, bin, "export", "--skills", skills, "--agents", agents, "--base-url", base, "--out", bucketURL)
	if code != 0 || !strings.Contains(stderr, "exported ") {
		t.Fatalf("export through the slim build to %s: exit %d: %s", bucketURL, code, stderr)
	}
	b, err := blob.OpenBucket(t.Context(), bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = filepath.WalkDir(folder, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(folder, path)
		if rel == ".skillserver-export.json" {
			return nil // the state file records when, and differs
		}
		got, err := b.ReadAll(t.Context(), filepath.ToSlash(rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("bucket object %s: %v; want the folder export's %d bytes", rel, err, len(want))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSlimBuildSavesMemory: serve from the build without the drivers,
// idle on the example tree, holds at least 10 MB less memory than the
// full build's (docs/operations.md, "Smaller builds": about 24 MB less),
// the reason skillserver is built that way.
func TestSlimBuildSavesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the binaries")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads VmRSS from /proc")
	}
	dir := plainBinaries(t) // the race detector's memory would swamp the drivers'
	slim, full := filepath.Join(dir, "skillserver"), filepath.Join(dir, fullBuild)
	skills, agents := exampleTree(t)
	rss := func(bin string) int64 {
		addr := fixture.FreePort(t)
		cmd := exec.Command(bin, "serve", "--listen", addr, "--skills", skills, "--agents", agents)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}()
		fixture.Eventually(t, 30*time.Second, bin+" is ready", func() error { return fixture.Readyz("http://" + addr) })
		time.Sleep(500 * time.Millisecond) // idle
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB$`).FindSubmatch(status)
		if m == nil {
			t.Fatalf("no VmRSS in /proc/%d/status:\n%s", cmd.Process.Pid, status)
		}
		kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return kb
	}
	s, f := rss(slim), rss(full)
	t.Logf("RSS of an idle serve of the example tree: %d KB without the drivers, %d KB with them", s, f)
	if s+10<<10 > f {
		t.Errorf("serve from the build without the bucket drivers holds %d KB, from the full build %d KB: want at least 10 MB less", s, f)
	}
}
