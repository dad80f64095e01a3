// Package targettest is the contract every export.Target keeps, written
// once and run against each target: the folder and the file:// bucket by
// internal/export's own tests, S3 against a real S3 server by the
// end-to-end tests. A new target (a driver, a host) passes it before the
// export writes to it.
package targettest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skillserver/skillserver/internal/export"
)

// Kind says what a target can do beyond the contract's core.
type Kind struct {
	// Attributes is true when the target stores a file's Content-Type,
	// Cache-Control and Content-Disposition (a bucket), so Compare tells
	// Metadata from Same; a folder stores bytes only.
	Attributes bool
	// Dir, when the target writes into a local folder, is that folder,
	// in a parent of its own: the suite then checks that no key writes
	// outside it.
	Dir string
}

// Run runs the contract against the target at out: open opens it anew
// (an export opens it once, so Compare may answer from what it saw when
// first asked). Keys are made unique per case, so every case can share
// one out.
func Run(t *testing.T, out string, kind Kind) {
	open := func(t *testing.T) export.Target {
		t.Helper()
		tg, err := export.Open(t.Context(), out)
		if err != nil {
			t.Fatalf("open %s: %v", out, err)
		}
		t.Cleanup(func() { _ = tg.Close() })
		return tg
	}
	file := func(key, body string) export.File {
		return export.File{Key: key, Body: []byte(body), ContentType: "application/json; charset=utf-8", CacheControl: "public, max-age=30"}
	}
	read := func(t *testing.T, tg export.Target, key string) (string, bool) {
		t.Helper()
		b, ok, err := tg.Read(t.Context(), key)
		if err != nil {
			t.Fatalf("Read %s: %v", key, err)
		}
		return string(b), ok
	}
	compare := func(t *testing.T, tg export.Target, f export.File) export.Change {
		t.Helper()
		c, err := tg.Compare(t.Context(), f)
		if err != nil {
			t.Fatalf("Compare %s: %v", f.Key, err)
		}
		return c
	}
	write := func(t *testing.T, tg export.Target, f export.File) {
		t.Helper()
		if err := tg.Write(t.Context(), f); err != nil {
			t.Fatalf("Write %s: %v", f.Key, err)
		}
	}

	t.Run("missing", func(t *testing.T) {
		tg := open(t)
		f := file("missing/index.json", "{}")
		if c := compare(t, tg, f); c != export.Missing {
			t.Errorf("Compare of a key never written: %v, want Missing", c)
		}
		if _, ok := read(t, tg, f.Key); ok {
			t.Error("Read of a key never written found it")
		}
		if err := tg.Delete(t.Context(), f.Key); err != nil {
			t.Errorf("Delete of a key never written: %v, want nil (pruning twice is no error)", err)
		}
	})

	t.Run("write, read, compare", func(t *testing.T) {
		f := file("written/index.json", `{"a":1}`)
		write(t, open(t), f)
		tg := open(t)
		if got, ok := read(t, tg, f.Key); !ok || got != string(f.Body) {
			t.Errorf("Read after Write: %q, %v; want %q", got, ok, f.Body)
		}
		if c := compare(t, tg, f); c != export.Same {
			t.Errorf("Compare of what was written: %v, want Same", c)
		}
		for name, other := range map[string]export.File{
			"the same length": file(f.Key, `{"a":2}`),
			"another length":  file(f.Key, `{"a":10}`),
		} {
			if c := compare(t, open(t), other); c != export.Bytes {
				t.Errorf("Compare with other bytes (%s): %v, want Bytes", name, c)
			}
		}
		attrs := f
		attrs.ContentType, attrs.ContentDisposition = "text/plain; charset=utf-8", "attachment"
		want := export.Same
		if kind.Attributes {
			want = export.Metadata
		}
		if c := compare(t, open(t), attrs); c != want {
			t.Errorf("Compare with other attributes only: %v, want %v", c, want)
		}
	})

	t.Run("overwrite is whole", func(t *testing.T) {
		tg := open(t)
		key := "overwritten/archive.zip"
		write(t, tg, file(key, strings.Repeat("a", 100_000)))
		write(t, tg, file(key, "short"))
		if got, ok := read(t, tg, key); !ok || got != "short" {
			t.Errorf("Read after an overwrite: %d bytes, %v; want the 5 new ones", len(got), ok)
		}
	})

	t.Run("names", func(t *testing.T) {
		tg := open(t)
		// Nested folders, spaces, non-ASCII and the longest name a
		// resource may have (skill.MaxNameBytes).
		keys := []string{
			"names/a/b/c/d/e.json",
			"names/dir with space/file with space.md",
			"names/ünïcödé/日本語.md",
			"names/long/" + strings.Repeat("n", 231) + ".md",
		}
		for _, k := range keys {
			write(t, tg, file(k, "body of "+k))
		}
		tg = open(t)
		for _, k := range keys {
			if got, ok := read(t, tg, k); !ok || got != "body of "+k {
				t.Errorf("Read %q: %q, %v", k, got, ok)
			}
			if c := compare(t, tg, file(k, "body of "+k)); c != export.Same {
				t.Errorf("Compare %q: %v, want Same", k, c)
			}
		}
	})

	t.Run("delete", func(t *testing.T) {
		f := file("deleted/x/index.json", "{}")
		write(t, open(t), f)
		tg := open(t)
		if err := tg.Delete(t.Context(), f.Key); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, ok := read(t, tg, f.Key); ok {
			t.Error("Read after Delete found it")
		}
		if c := compare(t, open(t), f); c != export.Missing {
			t.Errorf("Compare after Delete: %v, want Missing", c)
		}
		write(t, open(t), f) // a deleted key can be written again
		if _, ok := read(t, open(t), f.Key); !ok {
			t.Error("a key written again after Delete is not there")
		}
	})

	t.Run("compares side by side", func(t *testing.T) {
		tg := open(t)
		var files []export.File
		for i := range 32 {
			f := file("parallel/"+strings.Repeat("p", i+1)+".json", strings.Repeat("x", i))
			write(t, tg, f)
			files = append(files, f)
		}
		tg = open(t)
		var wg sync.WaitGroup
		errs := make(chan string, len(files))
		for _, f := range files {
			wg.Go(func() {
				if c, err := tg.Compare(context.WithoutCancel(t.Context()), f); err != nil || c != export.Same {
					errs <- f.Key
				}
			})
		}
		wg.Wait()
		close(errs)
		for k := range errs {
			t.Errorf("Compare %s side by side: not Same", k)
		}
	})

	if kind.Dir != "" {
		t.Run("no key leaves the target", func(t *testing.T) {
			tg := open(t)
			for _, k := range []string{"../escaped.json", "a/../../escaped.json", "/abs/escaped.json"} {
				_ = tg.Write(t.Context(), file(k, "escaped")) // may fail; must not write outside
				_ = tg.Delete(t.Context(), k)
			}
			if b, err := readOutside(kind.Dir, "escaped.json"); err == nil {
				t.Errorf("a key wrote outside the target: %q", b)
			}
		})
	}
}

// readOutside reads name in dir's parent folder, where no key may reach.
func readOutside(dir, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(filepath.Dir(dir), name))
}
