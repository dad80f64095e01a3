package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildWithoutBucketDrivers builds the binary with every optional
// bucket driver left out by its tag (docs/operations.md, "Smaller
// builds"): it still serves, and still exports into a folder and a
// file:// bucket, while a bucket URL whose driver is missing is refused
// with a message naming the tag, not gocloud's "no driver registered".
func TestBuildWithoutBucketDrivers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "skillserver")
	build := exec.Command("go", "build", "-tags", "no_s3blob,no_gcsblob,no_azureblob", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	skills, agents := exampleTree(t)
	export := func(out string) (int, string) {
		cmd := exec.Command(bin, "export", "--skills", skills, "--agents", agents, "--base-url", "https://skills.example.com", "--out", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), stderr.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	for scheme, tag := range map[string]string{"s3": "no_s3blob", "gs": "no_gcsblob", "azblob": "no_azureblob"} {
		code, stderr := export(scheme + "://some-bucket")
		if code != exitFailure || !strings.Contains(stderr, "built with -tags "+tag) || !strings.Contains(stderr, scheme+"://") {
			t.Errorf("export to %s:// without its driver: exit %d, stderr %q; want 1 naming %s", scheme, code, stderr, tag)
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
