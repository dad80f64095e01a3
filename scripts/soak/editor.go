//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Edit kinds, in the order the summary lists them.
const (
	editInPlace     = "edit SKILL.md in place"
	editRenameOver  = "edit SKILL.md by rename-over"
	editAddSkill    = "add skill"
	editDeleteSkill = "delete skill"
	editAddVersion  = "add version folder"
	editDelVersion  = "delete version folder"
	editRenameRes   = "rename resource"
	editAddBig      = "add large resource"
	editDelBig      = "delete large resource"
	editBreak       = "break skill (invalid SKILL.md)"
	editFix         = "fix broken skill"
	editSwap        = "swap skill folder by rename"
	editAgent       = "edit sub-agent in place"
)

var editKinds = []string{editInPlace, editRenameOver, editAddSkill, editDeleteSkill, editAddVersion, editDelVersion,
	editRenameRes, editAddBig, editDelBig, editBreak, editFix, editSwap, editAgent}

// editLog records when the editor changed which item, and counts edits
// by kind. Items are "skill:NAME" and "agent:NAME"; "tree:skill" marks
// a skill added or deleted, which moves the tree's pages.
type editLog struct {
	mu     sync.Mutex
	at     map[string][]time.Time
	counts map[string]int
}

func newEditLog() *editLog {
	return &editLog{at: map[string][]time.Time{}, counts: map[string]int{}}
}

func (l *editLog) record(kind string, items ...string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[kind]++
	for _, it := range items {
		l.at[it] = append(l.at[it], now)
	}
}

// touched reports whether the editor changed item at or after since.
func (l *editLog) touched(item string, since time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.at[item]
	return len(ts) > 0 && !ts[len(ts)-1].Before(since)
}

func (l *editLog) count(kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[kind]
}

func (l *editLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.counts {
		n += c
	}
	return n
}

// editor changes the tree the way people and git do. It keeps the tree's
// size level, so that a rising RSS is not the tree growing: every skill
// added is followed by one deleted, at most maxAddedVersions version
// folders and maxBig large resources it added are live at once, and the
// line each edit writes replaces the previous edit's line.
type editor struct {
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

func newEditor(log *editLog, tree string, stable []string, bigBytes int, seed uint64) (*editor, error) {
	e := &editor{log: log, skills: filepath.Join(tree, "skills"), agents: filepath.Join(tree, "agents"),
		tmp: filepath.Join(tree, "tmp"), rng: rand.New(rand.NewPCG(seed, 0x50a4)), stable: map[string]bool{}, bigBytes: bigBytes}
	for _, s := range stable {
		e.stable[s] = true
	}
	return e, os.MkdirAll(e.tmp, 0o755)
}

// schedule is one cycle of edits, one per tick: every kind comes up, a
// broken skill is fixed two ticks later, and adds are balanced.
var schedule = []func(e *editor) error{
	(*editor).editInPlace,
	(*editor).addSkill,
	(*editor).editRenameOver,
	(*editor).renameResource,
	(*editor).deleteSkill,
	(*editor).addVersion,
	(*editor).breakSkill,
	(*editor).addBig,
	(*editor).fixSkill,
	(*editor).swapFolder,
	(*editor).editAgent,
}

// loop makes one edit every interval until the soak's time is up.
func (e *editor) loop(s *soak, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-s.run.Done():
			return
		case <-t.C:
		}
		e.n++
		if err := schedule[i%len(schedule)](e); err != nil {
			s.fails.add("editor", classHarness, "the tree", err.Error())
		}
	}
}

// pick returns a random skill the editor may change for which ok holds
// (nil: any), or "" when none of 200 tries does.
func (e *editor) pick(ok func(dir string) bool) (string, error) {
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

func (e *editor) editInPlace() error    { return e.editSkillMD(editInPlace, false) }
func (e *editor) editRenameOver() error { return e.editSkillMD(editRenameOver, true) }

// editSkillMD rewrites a skill's SKILL.md, in place (truncate and write)
// or as editors and git do (a hidden temporary file renamed over it).
func (e *editor) editSkillMD(kind string, rename bool) error {
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
func (e *editor) addSkill() error {
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
func (e *editor) deleteSkill() error {
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
func (e *editor) addVersion() error {
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
func (e *editor) renameResource() error {
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
func (e *editor) addBig() error {
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
func (e *editor) breakSkill() error {
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

func (e *editor) fixSkill() error {
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
func (e *editor) swapFolder() error {
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
func (e *editor) editAgent() error {
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
