package provenance

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// commitTime reads what git wrote, however git stored it: loose objects,
// packs whose commits are offset or ref deltas of others, and SHA-256
// repositories.
func TestCommitTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		init   []string
		repack []string // nil: objects stay loose
	}{
		{"loose", []string{"init", "-q"}, nil},
		{"offset deltas", []string{"init", "-q"}, []string{"repack", "-adfq", "--window=50", "--depth=50"}},
		{"ref deltas", []string{"init", "-q"}, []string{"-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq", "--window=50", "--depth=50"}},
		{"sha256 packed", []string{"init", "-q", "--object-format=sha256"}, []string{"repack", "-adfq", "--window=50", "--depth=50"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			git := func(args ...string) string { return fixture.Git(t, top, args...) }
			git(tc.init...)
			// Long, similar messages: git stores such commits as deltas.
			msg := strings.Repeat("A long commit message that repeats. ", 80)
			want := map[string]time.Time{}
			for i := range 12 {
				at := time.Date(2026, 11, 1+i, 10, 0, i, 0, time.UTC)
				t.Setenv("GIT_COMMITTER_DATE", at.Format(time.RFC3339))
				git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("%s %d", msg, i))
				want[git("rev-parse", "HEAD")] = at
			}
			if tc.repack != nil {
				git(tc.repack...)
				packs, _ := filepath.Glob(filepath.Join(top, ".git/objects/pack/*.idx"))
				if len(packs) != 1 {
					t.Fatalf("packs %q", packs)
				}
				deltas := 0
				for line := range strings.Lines(git("verify-pack", "-v", packs[0])) {
					if f := strings.Fields(line); len(f) == 7 && f[1] == "commit" {
						deltas++
					}
				}
				if deltas == 0 {
					t.Fatal("git stored no commit as a delta; the test does not reach the delta code")
				}
			}
			for id, at := range want {
				got, err := commitTime(filepath.Join(top, ".git"), id)
				if err != nil || !got.Equal(at) {
					t.Errorf("commit %s: %v, %v; want %v", id, got, err, at)
				}
			}
			src, err := Read(top)
			head := git("rev-parse", "HEAD")
			if err != nil || src.Commit != head || !src.Time.Equal(want[head]) {
				t.Errorf("Read: %+v, %v; want HEAD %s at %v", src, err, head, want[head])
			}
			if _, err := commitTime(filepath.Join(top, ".git"), strings.Repeat("0", len(head))); err == nil {
				t.Error("a missing object has a time")
			}
		})
	}
}

func TestCommitterTime(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int64 // -1: an error
	}{
		{"tree x\nauthor A <a@x> 1 +0000\ncommitter C D <c@x> 1764583200 +0100\n\nmsg\n", 1764583200},
		{"tree x\ncommitter <> 5 -0700\n\ncommitter X <x> 9 +0000\n", 5},
		{"tree x\n\ncommitter X <x> 9 +0000\n", -1}, // in the message, not a header
		{"committer X <x>\n", -1},
		{"committer X <x> soon +0000\n", -1},
	} {
		got, err := committerTime([]byte(tc.text))
		if tc.want < 0 {
			if err == nil {
				t.Errorf("%q: %v, want an error", tc.text, got)
			}
		} else if err != nil || got.Unix() != tc.want {
			t.Errorf("%q: %v, %v; want %s", tc.text, got, err, strconv.FormatInt(tc.want, 10))
		}
	}
}

// A delta from a damaged or hostile pack never panics or reads outside
// its base.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x91, 6, 5})
	f.Add([]byte("abc"), []byte{3, 4, 0x90, 3, 1, 'd'})
	f.Add([]byte(""), []byte{0, 0})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err == nil && len(out) > maxFileBytes {
			t.Fatalf("%d bytes", len(out))
		}
	})
}
