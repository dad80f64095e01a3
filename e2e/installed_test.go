//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// latestVersionDir picks the folder the server must publish for a skill:
// the skill folder itself when it holds SKILL.md (flat), else the version
// folder with the highest semver release, or the highest prerelease when
// there is no release (docs/source-tree.md, "Order and `latest`"). Decided here independently
// of the server's own ordering code.
func latestVersionDir(t *testing.T, skillDir string) (dir, version string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(skillDir, "SKILL.md")); err == nil {
		return skillDir, ""
	}
	entries, err := os.ReadDir(skillDir)
	if err != nil {
		t.Fatal(err)
	}
	var best *semver.Version
	bestName := ""
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(skillDir, e.Name(), "SKILL.md")); err != nil {
			continue
		}
		v, err := semver.NewVersion(e.Name())
		if err != nil {
			t.Fatalf("%s: version folder %q is not semver; extend latestVersionDir", skillDir, e.Name())
		}
		better := best == nil ||
			(v.Prerelease() == "") != (best.Prerelease() == "") && v.Prerelease() == "" ||
			(v.Prerelease() == "") == (best.Prerelease() == "") && v.GreaterThan(best)
		if better {
			best, bestName = v, e.Name()
		}
	}
	if best == nil {
		t.Fatalf("%s: no version folder holds SKILL.md", skillDir)
	}
	return filepath.Join(skillDir, bestName), bestName
}

// treeFiles maps every non-hidden regular file below root (path relative,
// with "/") to its bytes and mode. Symlinks are followed, as the scanner
// publishes them as the files they point to.
func treeFiles(t *testing.T, root string) map[string]fileInfo {
	t.Helper()
	files := map[string]fileInfo{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = fileInfo{b, st.Mode().Perm()}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return files
}

type fileInfo struct {
	data []byte
	mode fs.FileMode
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// checkInstalled compares the skill installed (or downloaded) at dst with
// the latest version on disk under skillsRoot, file by file and byte for
// byte; indexVersion is the version the index advertised for it.
func checkInstalled(t *testing.T, skillsRoot, dst, name, indexVersion string) {
	t.Helper()
	srcDir, version := latestVersionDir(t, filepath.Join(skillsRoot, name))
	if version != "" && indexVersion != version {
		t.Errorf("%s: index version %q, want latest release %q", name, indexVersion, version)
	}
	want := treeFiles(t, srcDir)
	if _, err := os.Stat(dst); err != nil {
		t.Errorf("%s: not installed (%v)", name, err)
		return
	}
	got := treeFiles(t, dst)
	if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
		t.Errorf("%s: installed files %v, want %v (from %s)", name, sortedKeys(got), sortedKeys(want), srcDir)
	}
	for _, p := range sortedKeys(want) {
		g, ok := got[p]
		if !ok {
			continue
		}
		w := want[p].data
		if p == "SKILL.md" {
			// The CLI round-trips SKILL.md through TextDecoder, which
			// drops a leading BOM; everything else must be identical.
			w = bytes.TrimPrefix(w, utf8BOM)
		}
		if !bytes.Equal(g.data, w) {
			t.Errorf("%s/%s: installed bytes differ from %s\n got: %q\nwant: %q",
				name, p, filepath.Join(srcDir, filepath.FromSlash(p)), g.data, w)
		}
		if want[p].mode&0o111 != 0 && g.mode&0o111 == 0 {
			// Not an error: skills@1.7.4 does not preserve modes.
			t.Logf("%s/%s: executable on disk, installed %v (CLI drops modes)", name, p, g.mode)
		}
	}
}

// installedNames lists the skill folders under root, sorted.
func installedNames(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names, nil
}

// skillsLock is the part of ./skills-lock.json the tests read.
type skillsLock struct {
	Skills map[string]struct {
		SourceType      string `json:"sourceType"`
		SourceURL       string `json:"sourceUrl"`
		WellKnownDigest string `json:"wellKnownDigest"`
	} `json:"skills"`
}

func readSkillsLock(t *testing.T, dir string) skillsLock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "skills-lock.json"))
	if err != nil {
		t.Fatalf("skills-lock.json: %v", err)
	}
	var lock skillsLock
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatalf("skills-lock.json: %v\n%s", err, b)
	}
	return lock
}
