package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra/doc"
)

// cliDocDir holds the command reference, one page per command, generated
// from the command tree by cobra/doc.
const cliDocDir = "../../docs/cli"

// TestCLIDocsAreCurrent keeps docs/cli equal to what the command tree
// generates; UPDATE_GOLDEN=1 (`make golden`) rewrites it.
func TestCLIDocsAreCurrent(t *testing.T) {
	gen := t.TempDir()
	root := newRootCmd(nil)
	root.DisableAutoGenTag = true // no date: the pages stay equal from run to run
	if err := doc.GenMarkdownTree(root, gen); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.RemoveAll(cliDocDir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(cliDocDir, os.DirFS(gen)); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, got := readDir(t, gen), readDir(t, cliDocDir)
	for name, page := range want {
		if !bytes.Equal(got[name], page) {
			t.Errorf("docs/cli/%s is out of date with the command tree; run `make golden`", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/cli/%s documents no command; run `make golden`", name)
		}
	}
	if _, ok := want["skillserver_serve.md"]; !ok {
		t.Errorf("generated %q, no page for serve", slices.Sorted(maps.Keys(want)))
	}
}

// TestManPages renders the command tree as man pages: into $MAN_DIR
// when set (`make man`), else into a temporary directory, checking each
// command has one.
func TestManPages(t *testing.T) {
	dir := os.Getenv("MAN_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(nil)
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Title: "SKILLSERVER", Section: "1", Source: "skillserver " + build().Version, Manual: "skillserver manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		t.Fatal(err)
	}
	pages := readDir(t, dir)
	for _, cmd := range root.Commands() {
		if !cmd.IsAvailableCommand() {
			continue
		}
		page := pages["skillserver-"+cmd.Name()+".1"]
		if !bytes.Contains(page, []byte(".TH \"SKILLSERVER\" \"1\"")) || !bytes.Contains(page, []byte(cmd.Short)) {
			t.Errorf("man page of %s: %q", cmd.Name(), page)
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}
