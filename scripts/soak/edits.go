//go:build linux

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

func (e *treeEditor) editInPlace() error    { return e.editSkillMD(editInPlace, false) }
func (e *treeEditor) editRenameOver() error { return e.editSkillMD(editRenameOver, true) }

// editSkillMD rewrites a skill's SKILL.md, in place (truncate and write)
// or as editors and git do (a hidden temporary file renamed over it).
func (e *treeEditor) editSkillMD(kind string, rename bool) error {
	name, err := e.pick(func(dir string) bool { _, ok := skillMD(dir); return ok })
	if err != nil || name == "" {
		return err
	}
	p, _ := skillMD(filepath.Join(e.skills, name))
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	b = remark(b, e.n)
	if rename {
		tmp := filepath.Join(filepath.Dir(p), ".SKILL.md.soak-tmp")
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		err = os.Rename(tmp, p)
	} else {
		err = os.WriteFile(p, b, 0o644)
	}
	if err != nil {
		return err
	}
	e.log.record(kind, "skill:"+name)
	return nil
}

func newSkillMD(name, version string, n int) []byte {
	return fmt.Appendf(nil, "---\nname: %s\ndescription: A skill the soak wrote at edit %d. Use when a soak needs a skill that comes and goes.\nmetadata:\n  version: %q\n  author: soak\n---\n\n# %s\n\nWritten by scripts/soak at edit %d.\n",
		name, n, version, name, n)
}

// addSkill writes a new skill folder in place, file by file (so a reload
// may see it half written), every other one with a resource.
func (e *treeEditor) addSkill() error {
	name := fmt.Sprintf("soak-added-%05d", e.n)
	dir := filepath.Join(e.skills, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), newSkillMD(name, "1.0."+strconv.Itoa(e.n), e.n), 0o644); err != nil {
		return err
	}
	if e.n%2 == 0 {
		if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "references", "notes.md"), fmt.Appendf(nil, "# Notes\n\nEdit %d.\n", e.n), 0o644); err != nil {
			return err
		}
	}
	e.log.record(editAddSkill, "skill:"+name, "tree:skill")
	return nil
}

// deleteSkill removes a skill folder (rm -rf).
func (e *treeEditor) deleteSkill() error {
	name, err := e.pick(nil)
	if err != nil || name == "" {
		return err
	}
	if err := os.RemoveAll(filepath.Join(e.skills, name)); err != nil {
		return err
	}
	e.log.record(editDeleteSkill, "skill:"+name, "tree:skill")
	return nil
}

// addVersion adds a version folder to a versioned skill, and deletes the
// oldest one it added when more than maxAddedVersions are live.
func (e *treeEditor) addVersion() error {
	name, err := e.pick(func(dir string) bool { return !isFlat(dir) && len(versionDirs(dir)) > 0 })
	if err != nil || name == "" {
		return err
	}
	version := fmt.Sprintf("9.%d.0", e.n)
	dir := filepath.Join(e.skills, name, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), newSkillMD(name, version, e.n), 0o644); err != nil {
		return err
	}
	e.log.record(editAddVersion, "skill:"+name)
	e.versions = append(e.versions, dir)
	if len(e.versions) <= maxAddedVersions {
		return nil
	}
	old := e.versions[0]
	e.versions = e.versions[1:]
	if _, err := os.Stat(old); err != nil {
		return nil // its skill was deleted or swapped since
	}
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	e.log.record(editDelVersion, "skill:"+filepath.Base(filepath.Dir(old)))
	return nil
}

var renamed = regexp.MustCompile(`-r[0-9]+$`)

// renameResource renames one resource file of a flat skill (mv).
func (e *treeEditor) renameResource() error {
	name, err := e.pick(func(dir string) bool { return isFlat(dir) && len(resources(dir)) > 0 })
	if err != nil || name == "" {
		return err
	}
	res := resources(filepath.Join(e.skills, name))
	p := res[e.rng.IntN(len(res))]
	ext := path.Ext(p)
	stem := renamed.ReplaceAllString(strings.TrimSuffix(filepath.Base(p), ext), "")
	if err := os.Rename(p, filepath.Join(filepath.Dir(p), fmt.Sprintf("%s-r%d%s", stem, e.n, ext))); err != nil {
		return err
	}
	e.log.record(editRenameRes, "skill:"+name)
	return nil
}

// addBig writes a large resource of random bytes into a flat skill, and
// deletes the oldest one it added when more than maxBig are live.
func (e *treeEditor) addBig() error {
	name, err := e.pick(isFlat)
	if err != nil || name == "" {
		return err
	}
	p := filepath.Join(e.skills, name, "assets", fmt.Sprintf("soak-big-%05d.bin", e.n))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	data := make([]byte, e.bigBytes)
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], e.rng.Uint64())
	_, _ = rand.NewChaCha8(seed).Read(data)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	e.log.record(editAddBig, "skill:"+name)
	e.bigs = append(e.bigs, p)
	if len(e.bigs) <= maxBig {
		return nil
	}
	old := e.bigs[0]
	e.bigs = e.bigs[1:]
	if err := os.Remove(old); errors.Is(err, fs.ErrNotExist) {
		return nil // its skill was deleted since
	} else if err != nil {
		return err
	}
	rel, _ := filepath.Rel(e.skills, old)
	e.log.record(editDelBig, "skill:"+strings.SplitN(filepath.ToSlash(rel), "/", 2)[0])
	return nil
}

// breakSkill makes a flat skill's SKILL.md invalid (front matter never
// closed); fixSkill, two ticks later, writes its bytes back.
func (e *treeEditor) breakSkill() error {
	if e.broken != "" {
		return nil
	}
	name, err := e.pick(isFlat)
	if err != nil || name == "" {
		return err
	}
	p := filepath.Join(e.skills, name, "SKILL.md")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, fmt.Appendf(nil, "---\nname: %s\ndescription: [this front matter is never closed\n", name), 0o644); err != nil {
		return err
	}
	e.broken, e.brokenBody = name, b
	e.log.record(editBreak, "skill:"+name)
	return nil
}

func (e *treeEditor) fixSkill() error {
	if e.broken == "" {
		return nil
	}
	name := e.broken
	e.broken = ""
	if err := os.WriteFile(filepath.Join(e.skills, name, "SKILL.md"), e.brokenBody, 0o644); err != nil {
		return err
	}
	e.log.record(editFix, "skill:"+name)
	return nil
}

// swapFolder replaces a flat skill's folder by a changed copy the way a
// deploy does: the copy is made beside the roots, then mv skill away, mv
// the copy in, and the old folder removed.
func (e *treeEditor) swapFolder() error {
	name, err := e.pick(isFlat)
	if err != nil || name == "" {
		return err
	}
	dir := filepath.Join(e.skills, name)
	next := filepath.Join(e.tmp, fmt.Sprintf("%s.new-%d", name, e.n))
	if err := copyTree(dir, next); err != nil {
		return err
	}
	md := filepath.Join(next, "SKILL.md")
	b, err := os.ReadFile(md)
	if err != nil {
		return err
	}
	if err := os.WriteFile(md, remark(b, e.n), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(next, "references"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(next, "references", "soak-swap.md"), fmt.Appendf(nil, "# Swapped\n\nAt edit %d.\n", e.n), 0o644); err != nil {
		return err
	}
	old := filepath.Join(e.tmp, fmt.Sprintf("%s.old-%d", name, e.n))
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(next, dir); err != nil {
		return err
	}
	e.log.record(editSwap, "skill:"+name)
	return os.RemoveAll(old)
}

// copyTree copies the regular files of src into dst, keeping modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, fi.Mode().Perm()); err != nil {
			return err
		}
		return os.Chmod(target, fi.Mode().Perm())
	})
}

// editAgent rewrites a sub-agent file in place.
func (e *treeEditor) editAgent() error {
	var files []string
	ents, err := os.ReadDir(e.agents)
	if err != nil {
		return err
	}
	for _, ent := range ents {
		n := ent.Name()
		switch {
		case strings.HasPrefix(n, "."):
		case ent.IsDir():
			if vs, _ := filepath.Glob(filepath.Join(e.agents, n, "*.md")); len(vs) > 0 {
				files = append(files, vs[len(vs)-1])
			}
		case strings.HasSuffix(n, ".md"):
			files = append(files, filepath.Join(e.agents, n))
		}
	}
	if len(files) == 0 {
		return nil
	}
	p := files[e.rng.IntN(len(files))]
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, remark(b, e.n), 0o644); err != nil {
		return err
	}
	rel, _ := filepath.Rel(e.agents, p)
	e.log.record(editAgent, "agent:"+strings.TrimSuffix(strings.SplitN(filepath.ToSlash(rel), "/", 2)[0], ".md"))
	return nil
}
