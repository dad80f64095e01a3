package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/reload"
)

// TestLateWatchVerifiesWhatItMissed: a change made after the first scan
// read the tree and before the watch was set up raises no event; the
// verify that follows the set-up publishes it, once, and the watch's
// events carry the changes after it.
func TestLateWatchVerifiesWhatItMissed(t *testing.T) {
	skills := filepath.Join(t.TempDir(), "skills")
	mustWrite(t, filepath.Join(skills, "before", "SKILL.md"), fixture.SkillDoc("before", ""))
	var reports atomic.Int32
	src := catalog.Source{SkillsDir: skills}
	log := slog.New(slog.DiscardHandler)
	cat := catalog.New(src, log, catalog.Options{OnReload: func(catalog.ReloadResult) { reports.Add(1) }})
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	reloader := reload.New(cat, log, reload.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go reloader.Run(ctx)

	mustWrite(t, filepath.Join(skills, "missed", "SKILL.md"), fixture.SkillDoc("missed", "")) // no watch yet: no event
	cfg := &config.Config{Watch: true, WatchDebounce: 10 * time.Millisecond, WatchMaxWait: time.Second}
	var watch lateWatch
	var settled atomic.Int32
	go watch.start(ctx, cfg, src, reloader, log, func() { settled.Add(1) })
	published := func(name string) func() error {
		return func() error {
			if _, ok := cat.Current().Skill(name); !ok {
				return fmt.Errorf("generation %d does not publish %s", cat.Current().Generation, name)
			}
			return nil
		}
	}
	fixture.Eventually(t, 20*time.Second, "the verify publishes the skill written before the watch", published("missed"))
	if gen := cat.Current().Generation; gen != 2 {
		t.Errorf("generation %d after the verify, want 2", gen)
	}
	fixture.Eventually(t, 5*time.Second, "the server settled once the verify is done", func() error {
		if n := settled.Load(); n != 1 {
			return fmt.Errorf("settled %d times", n)
		}
		return nil
	})
	mustWrite(t, filepath.Join(skills, "later", "SKILL.md"), fixture.SkillDoc("later", ""))
	fixture.Eventually(t, 20*time.Second, "the watch publishes a skill written after it", published("later"))
	// A reload is reported just after it is published.
	fixture.Eventually(t, 5*time.Second, "the first scan, the verify and the watch's update reported", func() error {
		if n := reports.Load(); n != 3 {
			return fmt.Errorf("%d reloads reported", n)
		}
		return nil
	})
}
