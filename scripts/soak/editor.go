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
