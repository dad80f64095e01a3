package content

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// firstEntry is the entry the tests put first in an archive, as a skill
// version puts its SKILL.md.
const firstEntry = "SKILL.md"

var fixture = []ArchiveFile{
	{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho hi\n"), Executable: true},
	{Path: "SKILL.md", Data: []byte("---\nname: demo\ndescription: Demo.\n---\n\nBody.\n")},
	{Path: "assets/b.bin", Data: []byte{0, 1, 2, 3, 255}},
	{Path: "README.md", Data: []byte("# Demo\n")},
}

// TestBuildZipGolden pins the bytes of a fixture archive. If this fails,
// archive bytes changed: every published archive digest changes with them,
// and every client re-downloads every archive skill. Change the constant
// only as a deliberate decision.
func TestBuildZipGolden(t *testing.T) {
	const want = Digest("sha256:0367c2d9b4076cb603f37d903d437685ce5319d9691e3fa0f6dede8afead3e8b")
	b, err := BuildZip(firstEntry, fixture)
	if err != nil {
		t.Fatal(err)
	}
	if got := Sum(b); got != want {
		t.Errorf("fixture archive digest = %s, want %s", got, want)
	}
	// Input order does not matter.
	rev := []ArchiveFile{fixture[3], fixture[2], fixture[1], fixture[0]}
	b2, err := BuildZip(firstEntry, rev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Error("archive bytes depend on input order")
	}
}

func TestBuildZipLayout(t *testing.T) {
	b, err := BuildZip(firstEntry, fixture)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := []string{"SKILL.md", "README.md", "assets/b.bin", "scripts/run.sh"}
	if len(zr.File) != len(wantOrder) {
		t.Fatalf("%d entries, want %d", len(zr.File), len(wantOrder))
	}
	for i, f := range zr.File {
		if f.Name != wantOrder[i] {
			t.Errorf("entry %d = %q, want %q", i, f.Name, wantOrder[i])
		}
		wantMode := "-rw-r--r--"
		if f.Name == "scripts/run.sh" {
			wantMode = "-rwxr-xr-x"
		}
		if f.Mode().String() != wantMode {
			t.Errorf("%s: mode %s, want %s", f.Name, f.Mode(), wantMode)
		}
		if f.ModifiedDate != dosDate1980 || f.ModifiedTime != 0 || len(f.Extra) != 0 {
			t.Errorf("%s: date %d time %d extra %d", f.Name, f.ModifiedDate, f.ModifiedTime, len(f.Extra))
		}
	}
	if _, err := BuildZip(firstEntry, []ArchiveFile{{Path: "a"}, {Path: "a"}}); err == nil {
		t.Error("duplicate paths accepted")
	}
}

// TestReusedEntriesGiveTheSameArchive: entries taken from an earlier
// archive (ZipSpans) instead of compressed again give byte-identical
// archives, whether all, some or none are reused, and ZipSpans finds
// every entry's deflated bytes inside the archive it was given.
func TestReusedEntriesGiveTheSameArchive(t *testing.T) {
	want, err := BuildZip(firstEntry, fixture)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := ZipSpans(want)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != len(fixture) {
		t.Fatalf("ZipSpans found %d entries, want %d", len(spans), len(fixture))
	}
	entries := map[string][]byte{}
	for p, sp := range spans {
		b, ok := sp.Of(want)
		if !ok {
			t.Fatalf("%s: span %v lies outside the archive", p, sp)
		}
		entries[p] = b
	}
	if _, ok := (Span{Off: int64(len(want)) - 1, Len: 2}).Of(want); ok {
		t.Error("a span past the end of the archive was taken")
	}
	for _, f := range fixture {
		fr := flate.NewReader(bytes.NewReader(entries[f.Path]))
		got, err := io.ReadAll(fr)
		if err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("%s: entry inflates to %q (%v), want the file's bytes", f.Path, got, err)
		}
	}
	for mask := range 1 << len(fixture) {
		files := slices.Clone(fixture)
		for i := range files {
			if mask&(1<<i) != 0 {
				files[i].Deflated = entries[files[i].Path]
			}
		}
		got, err := BuildZip(firstEntry, files)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("reusing entries %04b changed the archive", mask)
		}
	}
	// The same bytes under another path and mode reuse the same entry.
	moved := []ArchiveFile{{Path: "SKILL.md", Data: fixture[0].Data, Deflated: entries[fixture[0].Path]}, {Path: "x/copy", Data: fixture[1].Data, Executable: true, Deflated: entries[fixture[1].Path]}}
	fresh := []ArchiveFile{{Path: "SKILL.md", Data: fixture[0].Data}, {Path: "x/copy", Data: fixture[1].Data, Executable: true}}
	a, err := BuildZip(firstEntry, moved)
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildZip(firstEntry, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("an entry reused under another path differs from a fresh one")
	}
	if _, err := ZipSpans([]byte("not a zip")); err == nil {
		t.Error("ZipSpans accepted a non-zip")
	}
}

func TestParseDigest(t *testing.T) {
	hex := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	tests := []struct {
		in   string
		want Digest
		ok   bool
	}{
		{"sha256:" + hex, Digest("sha256:" + hex), true},
		{hex, Digest("sha256:" + hex), true},
		{"sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", "", false},
		{"sha256:abc", "", false},
		{"md5:" + hex, "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := ParseDigest(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDigest(%q) = %q, %v", tt.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidDigest) {
			t.Errorf("error %v is not ErrInvalidDigest", err)
		}
	}
	if Sum(nil) != Digest("sha256:"+hex) {
		t.Error("Sum(nil) is not the empty digest")
	}
}

func TestStore(t *testing.T) {
	b := NewBuilder(nil)
	d1 := b.Put([]byte("one"))
	d2 := b.Put([]byte("one"))
	b.Put([]byte("three"))
	s := b.Store()
	if d1 != d2 || s.Len() != 2 || s.Bytes() != 8 {
		t.Errorf("len %d bytes %d", s.Len(), s.Bytes())
	}
	if got, ok := s.Get(d1); !ok || string(got) != "one" {
		t.Errorf("Get = %q, %v", got, ok)
	}
}

// A digest's bytes, as a Dir keys it, give the digest back; what is not a
// canonical digest has none.
func TestDigestSum(t *testing.T) {
	d := Sum([]byte("x"))
	s, ok := d.sum()
	if !ok || s.Digest() != d || s != sha256.Sum256([]byte("x")) {
		t.Fatalf("sum of %s: %x %v", d, s, ok)
	}
	for _, bad := range []Digest{"", "sha256:", Digest("sha256:" + strings.ToUpper(d.Hex())), d[:len(d)-1], d + "0", Digest("sha256:" + strings.Repeat("g", 64))} {
		if _, ok := bad.sum(); ok {
			t.Errorf("%q has a sum", bad)
		}
	}
	if testing.AllocsPerRun(10, func() { d.sum() }) != 0 {
		t.Error("taking a digest's sum allocates")
	}
}

// TestBuildZipLarge: an archive over the pooled buffers' size is built in
// one buffer allocated at zipBound, never grown (a 1 GiB file's archive
// grown by doubling and copied out took 4.6 GB at its peak). Incompressible
// bytes, where deflate's output is largest, stay within the bound; the
// archive reads back and is the same bytes each time.
func TestBuildZipLarge(t *testing.T) {
	data := make([]byte, 6<<20)
	rand.NewChaCha8([32]byte{1}).Read(data)
	text := bytes.Repeat([]byte("compressible line of a large resource\n"), 200_000)
	for _, files := range [][]ArchiveFile{
		{{Path: "SKILL.md", Data: []byte("---\nname: x\n---\n")}, {Path: "big.bin", Data: data}},
		{{Path: "SKILL.md", Data: []byte("---\nname: x\n---\n")}, {Path: "big.txt", Data: text}},
	} {
		bound := zipBound(files)
		if bound <= maxPooledBuffer {
			t.Fatalf("bound %d: not a large archive", bound)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a, err := BuildZip("SKILL.md", files)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		// One buffer at the bound, and a compressor's state (about a
		// megabyte) when the pool had none: grown by doubling and
		// copied out, the same archive allocated over three times its
		// size.
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(bound+bound/4+2<<20) {
			t.Errorf("%s: building an archive of %d bytes allocated %d", files[1].Path, len(a), got)
		}
		if len(a) > bound || cap(a) > bound {
			t.Errorf("%s: archive of %d bytes (capacity %d) over its bound %d: its buffer grew", files[1].Path, len(a), cap(a), bound)
		}
		// A copy's capacity is the allocator's rounding of its length.
		if cap(a)-len(a) > len(a)/32+8<<10 {
			t.Errorf("%s: archive of %d bytes keeps a capacity of %d", files[1].Path, len(a), cap(a))
		}
		r, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
		if err != nil {
			t.Fatal(err)
		}
		f, err := r.File[1].Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(got, files[1].Data) {
			t.Errorf("%s reads back as %d bytes (%v), want its %d", files[1].Path, len(got), err, len(files[1].Data))
		}
		if again, _ := BuildZip("SKILL.md", files); !bytes.Equal(again, a) {
			t.Errorf("%s: two builds differ", files[1].Path)
		}
	}
}
