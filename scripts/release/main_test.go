package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestArchivesAreReproducible: the same files give the same archive bytes
// whatever their modification times, owners and order on the command
// line; every entry has the given time, owner 0:0 without names, and
// mode 0755 or 0644; the entries are sorted under the prefix folder.
func TestArchivesAreReproducible(t *testing.T) {
	mtime := time.Unix(1764600000, 0).UTC()
	build := func(ext string, touch time.Time, reverse bool) []byte {
		dir := t.TempDir()
		var files []string
		for name, mode := range map[string]os.FileMode{"skillserver": 0o700, "README.md": 0o600, "LICENSE": 0o664} {
			f := filepath.Join(dir, name)
			if err := os.WriteFile(f, []byte("the bytes of "+name), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(f, touch, touch); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		slices.Sort(files)
		if reverse {
			slices.Reverse(files)
		}
		out := filepath.Join(dir, "a"+ext)
		if err := archive(out, "skillserver_v1.2.3_linux_amd64", mtime, files); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := []string{"skillserver_v1.2.3_linux_amd64/", "skillserver_v1.2.3_linux_amd64/LICENSE", "skillserver_v1.2.3_linux_amd64/README.md", "skillserver_v1.2.3_linux_amd64/skillserver"}
	wantMode := []int64{0o755, 0o644, 0o644, 0o755}

	t.Run("tar.gz", func(t *testing.T) {
		a, b := build(".tar.gz", time.Now(), false), build(".tar.gz", time.Unix(0, 0), true)
		if !bytes.Equal(a, b) {
			t.Fatal("two archives of the same files differ")
		}
		zr, err := gzip.NewReader(bytes.NewReader(a))
		if err != nil {
			t.Fatal(err)
		}
		if !zr.ModTime.IsZero() || zr.Name != "" {
			t.Errorf("gzip header: time %v, name %q; want neither", zr.ModTime, zr.Name)
		}
		tr := tar.NewReader(zr)
		var names []string
		for i := 0; ; i++ {
			h, err := tr.Next()
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
			if i < len(wantMode) && h.Mode != wantMode[i] {
				t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, wantMode[i])
			}
			if !h.ModTime.Equal(mtime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || len(h.PAXRecords) != 0 {
				t.Errorf("%s: time %v, owner %d:%d (%q:%q), PAX %v; want %v, 0:0 without names, none", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname, h.PAXRecords, mtime)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("entries %q, want %q", names, want)
		}
	})
	t.Run("zip", func(t *testing.T) {
		a, b := build(".zip", time.Now(), false), build(".zip", time.Unix(0, 0), true)
		if !bytes.Equal(a, b) {
			t.Fatal("two archives of the same files differ")
		}
		zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for i, f := range zr.File {
			names = append(names, f.Name)
			if i < len(wantMode) && int64(f.Mode().Perm()) != wantMode[i] {
				t.Errorf("%s: mode %o, want %o", f.Name, f.Mode().Perm(), wantMode[i])
			}
			if !f.Modified.Equal(mtime) {
				t.Errorf("%s: time %v, want %v", f.Name, f.Modified, mtime)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("entries %q, want %q", names, want)
		}
	})
}

// TestSums: SHA256SUMS lists every other file, by name, as sha256sum
// prints them.
func TestSums(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"b.zip": "b", "a.tar.gz": "a", "SHA256SUMS": "old"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := sums(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tar.gz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.zip\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
}
