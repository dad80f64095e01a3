//go:build linux

package main

import (
	"sync"
	"time"
)

// The kinds of edit the editor makes, and the log of what it made when,
// which the clients and the judge read to explain what they saw.

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
