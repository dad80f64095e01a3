//go:build linux

package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

func newEditor(log *editLog, tree string, stable []string, bigBytes int, seed uint64) (*treeEditor, error) {
	e := &treeEditor{log: log, skills: filepath.Join(tree, "skills"), agents: filepath.Join(tree, "agents"),
		tmp: filepath.Join(tree, "tmp"), rng: rand.New(rand.NewPCG(seed, 0x50a4)), stable: map[string]bool{}, bigBytes: bigBytes}
	for _, s := range stable {
		e.stable[s] = true
	}
	return e, os.MkdirAll(e.tmp, 0o755)
}

// schedule is one cycle of edits, one per tick: every kind comes up, a
// broken skill is fixed two ticks later, and adds are balanced.
var schedule = []func(e *treeEditor) error{
	(*treeEditor).editInPlace,
	(*treeEditor).addSkill,
	(*treeEditor).editRenameOver,
	(*treeEditor).renameResource,
	(*treeEditor).deleteSkill,
	(*treeEditor).addVersion,
	(*treeEditor).breakSkill,
	(*treeEditor).addBig,
	(*treeEditor).fixSkill,
	(*treeEditor).swapFolder,
	(*treeEditor).editAgent,
}

// loop makes one edit every interval until the soak's time is up.
func (e *treeEditor) loop(s *soak, every time.Duration) {
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
			s.fails.report("editor", classHarness, "the tree", err.Error())
		}
	}
}
