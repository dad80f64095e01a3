package export_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/fixture"
)

// The bucket form, through gocloud.dev/blob's file:// driver: the same
// objects, and a second export uploads nothing, not even its state file
// (the same file, not one renamed over it); nor does a second export
// into a folder.
func TestBucketUploadsOnlyWhatChanged(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	dir, bucketDir := t.TempDir(), t.TempDir()
	exportTo(t, snap, dir, export.Options{})
	url := "file://" + filepath.ToSlash(bucketDir)
	first := exportTo(t, snap, url, export.Options{})
	if first.Written != first.Files {
		t.Errorf("first upload %+v: want every file written", first)
	}
	if got, want := readTree(t, bucketDir), readTree(t, dir); !maps.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("the bucket holds other objects than the folder export")
	}
	for _, out := range []string{url, dir} {
		stateDir := strings.TrimPrefix(out, "file://")
		before := stat(t, filepath.Join(stateDir, export.StateFile))
		again := exportTo(t, snap, out, export.Options{})
		if again.Written != 0 || again.Metadata != 0 || again.Unchanged != again.Files {
			t.Errorf("second export to %s %+v: want nothing written", out, again)
		}
		if !os.SameFile(before, stat(t, filepath.Join(stateDir, export.StateFile))) {
			t.Errorf("the second export to %s rewrote its state file", out)
		}
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// Objects with the right bytes but the wrong attributes are uploaded
// again and counted apart; objects with wrong bytes are uploaded too, not
// counted as metadata only; the rest is not touched.
func TestBucketCorrectsMetadata(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	bucketDir := t.TempDir()
	url := "file://" + filepath.ToSlash(bucketDir)
	exportTo(t, snap, url, export.Options{})
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]export.File{}
	for _, f := range files {
		byKey[f.Key] = f
	}
	artifact := files[0].Key // artifacts come first
	const index, manifest, card = ".well-known/agent-skills/index.json", "manifest.json", ".well-known/agent-card.json"
	if !strings.HasPrefix(artifact, "api/v1/blobs/") || byKey[index].Key == "" || byKey[manifest].Key == "" || byKey[card].Key == "" {
		t.Fatalf("the export lacks an artifact, %s, %s or %s", index, manifest, card)
	}
	b, err := blob.OpenBucket(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tamper := map[string]*blob.WriterOptions{
		artifact: {ContentType: "application/octet-stream"},
		index:    {ContentType: byKey[index].ContentType, CacheControl: "public, max-age=31536000, immutable"},
		manifest: {ContentType: byKey[manifest].ContentType, CacheControl: byKey[manifest].CacheControl, ContentEncoding: "gzip"},
	}
	for key, opts := range tamper {
		if err := b.WriteAll(t.Context(), key, byKey[key].Body, opts); err != nil {
			t.Fatal(err)
		}
	}
	// Other bytes, the right attributes.
	if err := b.WriteAll(t.Context(), card, []byte("{}"), &blob.WriterOptions{ContentType: byKey[card].ContentType, CacheControl: byKey[card].CacheControl}); err != nil {
		t.Fatal(err)
	}
	untouched := map[string]os.FileInfo{}
	for _, f := range files {
		if _, ok := tamper[f.Key]; !ok && f.Key != card {
			untouched[f.Key] = stat(t, filepath.Join(bucketDir, filepath.FromSlash(f.Key)))
		}
	}

	res := exportTo(t, snap, url, export.Options{})
	if res.Written != 4 || res.Metadata != 3 || res.Unchanged != res.Files-4 {
		t.Errorf("export after the tampering %+v: want 4 written, 3 of them for metadata only", res)
	}
	for _, f := range files {
		a, err := b.Attributes(t.Context(), f.Key)
		if err != nil {
			t.Fatal(err)
		}
		body, err := b.ReadAll(t.Context(), f.Key)
		if err != nil {
			t.Fatal(err)
		}
		if a.ContentType != f.ContentType || a.CacheControl != f.CacheControl || a.ContentEncoding != "" || !bytes.Equal(body, f.Body) {
			t.Errorf("%s after the export: Content-Type %q, Cache-Control %q, Content-Encoding %q, bytes equal %v; want %q, %q, none, equal",
				f.Key, a.ContentType, a.CacheControl, a.ContentEncoding, bytes.Equal(body, f.Body), f.ContentType, f.CacheControl)
		}
		if before, ok := untouched[f.Key]; ok && !os.SameFile(before, stat(t, filepath.Join(bucketDir, filepath.FromSlash(f.Key)))) {
			t.Errorf("%s, untouched, was written again", f.Key)
		}
	}
}

// A store whose MD5 of an object is not the MD5 of its bytes (S3 gives
// such ETags to objects it encrypts with SSE-KMS or SSE-C keys; here the
// file:// driver's recorded MD5 is overwritten) still has an unchanged
// tree's export write nothing: the export recorded the MD5 of what it
// wrote in the object's metadata. Before, every such object was uploaded
// again by every export.
func TestBucketWhoseMD5IsNotTheData(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	bucketDir := t.TempDir()
	url := "file://" + filepath.ToSlash(bucketDir)
	first := exportTo(t, snap, url, export.Options{})
	var attrs []string
	err := filepath.WalkDir(bucketDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".attrs") {
			attrs = append(attrs, p)
		}
		return err
	})
	if err != nil || len(attrs) < first.Files {
		t.Fatalf("%d .attrs files of the file:// driver under %s for %d files: %v", len(attrs), bucketDir, first.Files, err)
	}
	for _, p := range attrs {
		var xa map[string]any
		if err := json.Unmarshal(readFile(t, p), &xa); err != nil {
			t.Fatal(err)
		}
		xa["md5"] = []byte("0123456789abcdef") // 16 bytes, not the data's MD5
		b, err := json.Marshal(xa)
		if err != nil {
			t.Fatal(err)
		}
		write(t, p, string(b))
	}
	if res := exportTo(t, snap, url, export.Options{}); res.Written != 0 || res.Unchanged != first.Files {
		t.Errorf("export to a bucket whose MD5s are not the data's: %+v; want nothing written (%d attributes files changed)", res, len(attrs))
	}
}
