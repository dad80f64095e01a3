//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The editor and what its edits read of the tree (edits.go makes them,
// editor.go schedules them).

// treeEditor changes the tree the way people and git do. It keeps the tree's
// size level, so that a rising RSS is not the tree growing: every skill
// added is followed by one deleted, at most maxAddedVersions version
// folders and maxBig large resources it added are live at once, and the
// line each edit writes replaces the previous edit's line.
type treeEditor struct {
	log            *editLog
	skills, agents string // the roots
	tmp            string // beside the roots, on the same file system
	rng            *rand.Rand
	stable         map[string]bool // skills the load generator reads
	bigBytes       int
	n              int

	broken     string // the skill left invalid, to be fixed
	brokenBody []byte
	bigs       []string // large resources added, oldest first
	versions   []string // version folders added, oldest first
}

const (
	maxBig           = 2
	maxAddedVersions = 3
)

func isFlat(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "SKILL.md"))
	return err == nil && fi.Mode().IsRegular()
}

// versionDirs are a versioned skill's version folders, sorted.
func versionDirs(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, ent := range ents {
		if ent.IsDir() && !strings.HasPrefix(ent.Name(), ".") && isFlat(filepath.Join(dir, ent.Name())) {
			out = append(out, filepath.Join(dir, ent.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// resources are a flat skill's resource files, but the editor's large
// ones.
func resources(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && p != filepath.Join(dir, "SKILL.md") && !strings.HasPrefix(name, "soak-big-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// skillMD is the SKILL.md an edit of the skill changes: a flat skill's,
// or a versioned skill's last version folder's.
func skillMD(dir string) (string, bool) {
	if isFlat(dir) {
		return filepath.Join(dir, "SKILL.md"), true
	}
	vs := versionDirs(dir)
	if len(vs) == 0 {
		return "", false
	}
	return filepath.Join(vs[len(vs)-1], "SKILL.md"), true
}

const editMark = "\n<!-- soak edit "

// remark replaces the line the previous edit wrote with one for edit n.
func remark(b []byte, n int) []byte {
	if i := bytes.LastIndex(b, []byte(editMark)); i >= 0 {
		b = b[:i]
	}
	return fmt.Appendf(b, "%s%d -->\n", editMark, n)
}

// pick returns a random skill the editor may change for which ok holds
// (nil: any), or "" when none of 200 tries does.
func (e *treeEditor) pick(ok func(dir string) bool) (string, error) {
	ents, err := os.ReadDir(e.skills)
	if err != nil {
		return "", err
	}
	var names []string
	for _, ent := range ents {
		n := ent.Name()
		if ent.IsDir() && !strings.HasPrefix(n, ".") && !e.stable[n] && n != e.broken {
			names = append(names, n)
		}
	}
	for range min(200, 4*len(names)) {
		n := names[e.rng.IntN(len(names))]
		if ok == nil || ok(filepath.Join(e.skills, n)) {
			return n, nil
		}
	}
	return "", nil
}
