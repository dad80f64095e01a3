package content

import (
	"archive/zip"
	"bytes"
	"cmp"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// fuzzFiles turns a fuzz input into files: one per line of paths (at
// most 16), data cut into as many consecutive pieces, and bit i of exec
// marking file i executable.
func fuzzFiles(paths string, data []byte, exec uint16) []ArchiveFile {
	names := strings.Split(paths, "\n")
	if len(names) > 16 {
		names = names[:16]
	}
	files := make([]ArchiveFile, len(names))
	for i, name := range names {
		lo, hi := i*len(data)/len(names), (i+1)*len(data)/len(names)
		files[i] = ArchiveFile{Path: name, Data: data[lo:hi], Executable: exec&(1<<i) != 0}
	}
	return files
}

// FuzzArchive: building an archive of any paths, bytes and modes never
// panics; it fails only for a path that is not a clean relative file path
// or for a duplicate; otherwise its bytes do not depend on input order or
// on reusing deflated entries, and archive/zip reads back exactly the
// input files, SKILL.md first and the rest in byte order of path.
func FuzzArchive(f *testing.F) {
	f.Add("SKILL.md\nscripts/run.sh\nassets/b.bin", []byte("---\nname: demo\n---\n#!/bin/sh\n\x00\x01\xff"), uint16(2))
	f.Add("SKILL.md", []byte("only"), uint16(0))
	f.Add("b\na\nSKILL.md\na-b\na/x", []byte("0123456789"), uint16(0xffff))
	f.Add("SKILL.md\nSKILL.md", []byte("dup"), uint16(0))
	f.Add("SKILL.md\ndir/", []byte("x"), uint16(0))
	f.Add("SKILL.md\n../escape\n/abs\n.\n", []byte("x"), uint16(0))
	f.Add("SKILL.md\ncaf\u00e9.md\n\xff\xfe", []byte(strings.Repeat("z", 4096)), uint16(1))
	f.Add("", []byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, paths string, data []byte, exec uint16) {
		files := fuzzFiles(paths, data, exec)
		orig := slices.Clone(files)
		out, err := BuildZip(firstEntry, files)
		if !slices.EqualFunc(files, orig, func(a, b ArchiveFile) bool { return a.Path == b.Path && bytes.Equal(a.Data, b.Data) }) {
			t.Fatal("BuildZip modified its input")
		}
		invalid := slices.ContainsFunc(files, func(f ArchiveFile) bool { return !fs.ValidPath(f.Path) || f.Path == "." })
		seen := map[string]bool{}
		dup := false
		for _, f := range files {
			dup = dup || seen[f.Path]
			seen[f.Path] = true
		}
		if err != nil {
			if !invalid && !dup {
				t.Fatalf("BuildZip(%q): %v", paths, err)
			}
			return
		}
		if invalid || dup {
			t.Fatalf("BuildZip accepted invalid or duplicate paths %q", paths)
		}

		reversed := slices.Clone(files)
		slices.Reverse(reversed)
		again, err := BuildZip(firstEntry, reversed)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("archive bytes depend on input order (err %v)", err)
		}
		spans, err := ZipSpans(out)
		if err != nil {
			t.Fatal(err)
		}
		reused := slices.Clone(files)
		for i := range reused {
			reused[i].Deflated, _ = spans[reused[i].Path].Of(out)
		}
		if again, err := BuildZip(firstEntry, reused); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("reusing deflated entries changed the archive (err %v)", err)
		}

		r, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
		if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
			t.Fatal(err)
		}
		want := slices.Clone(files)
		rank := func(f ArchiveFile) int {
			if f.Path == firstEntry {
				return 0
			}
			return 1
		}
		slices.SortFunc(want, func(a, b ArchiveFile) int {
			return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.Path, b.Path))
		})
		if len(r.File) != len(want) {
			t.Fatalf("archive holds %d entries, want %d", len(r.File), len(want))
		}
		for i, zf := range r.File {
			w := want[i]
			if zf.Name != w.Path || zf.Mode() != w.Mode() || zf.Method != zip.Deflate || len(zf.Extra) != 0 {
				t.Errorf("entry %d = %q mode %v method %d extra %d, want %q mode %v, deflated, no extra", i, zf.Name, zf.Mode(), zf.Method, len(zf.Extra), w.Path, w.Mode())
				continue
			}
			rc, err := zf.Open()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(got, w.Data) {
				t.Errorf("entry %q = %q (err %v), want %q", zf.Name, got, err, w.Data)
			}
		}
	})
}
