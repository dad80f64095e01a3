package catalog

// Scan benchmarks over a generated, realistic tree (docs/benchmarks.md,
// scripts/bench-scan.sh).
//
// The tree: 10,000 skills (10% versioned with 2-3 version folders, 30% with
// 1-5 resources of 1-32 KiB, a few executable scripts and binary assets) and
// 1,000 sub-agents (85% flat <name>.md, 15% versioned <name>/<version>.md).
// It is generated deterministically (fixed seed, fixed modification times)
// into $SKILLSERVER_BENCH_TREE, or into $TMPDIR/skillserver-bench-tree-<gen>
// when that is unset, and reused while its marker file says it was made by
// this generator. A per-process temporary directory is not used because it
// could not be removed without a TestMain and the tree is ~200 MB.
//
// Nothing here runs in a normal `go test`: the tree is generated only when a
// benchmark asks for it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

const (
	// benchGenerator names the generator; change it whenever the generated
	// bytes change, so a stale tree on disk is never measured.
	benchGenerator = "skillserver-bench-tree/v1"
	benchMarker    = ".skillserver-bench-tree.json"
	benchSkillsN   = 10_000
	benchAgentsN   = 1_000
	benchSeed1     = 0x5eed_2026
	benchSeed2     = 0x0000_0042
)

// benchLimits mirror the server's configuration defaults
// (internal/config: max_file_bytes, max_files, max_total_bytes).
var benchLimits = scan.Limits{MaxFileBytes: 10 << 20, MaxFiles: 1000, MaxTotalBytes: 50 << 20}

// benchMTime is the modification time of every generated file: fixed, so
// the tree is byte- and metadata-identical on every machine, and far in the
// past, so the file cache trusts it (see scanCache.lookup's inDoubt).
var benchMTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchTree describes a generated tree; it is also the marker file.
type benchTree struct {
	Generator string `json:"generator"`
	Dir       string `json:"-"`

	Skills              int `json:"skills"`
	SkillVersions       int `json:"skillVersions"`
	VersionedSkills     int `json:"versionedSkills"`
	SkillsWithResources int `json:"skillsWithResources"`
	Agents              int `json:"agents"`
	AgentVersions       int `json:"agentVersions"`

	// Files and Bytes count every regular file under skills/ and agents/:
	// exactly what `find skills agents -type f | xargs sha256sum` reads.
	Files         int   `json:"files"`
	Bytes         int64 `json:"bytes"`
	SkillMDFiles  int   `json:"skillMdFiles"`
	SkillMDBytes  int64 `json:"skillMdBytes"`
	ResourceFiles int   `json:"resourceFiles"`
	ResourceBytes int64 `json:"resourceBytes"`
	AgentFiles    int   `json:"agentFiles"`
	AgentBytes    int64 `json:"agentBytes"`
	Executables   int   `json:"executables"`

	// Skills the reload benchmarks rewrite: a flat one with only SKILL.md
	// and a flat one with resources (its archive is rebuilt on each touch).
	TouchPlain    string `json:"touchPlain"`
	TouchArchive  string `json:"touchArchive"`
	TouchArchiveN int    `json:"touchArchiveResources"`
}

func (t *benchTree) source() Source {
	return Source{
		SkillsDir: filepath.Join(t.Dir, "skills"),
		AgentsDir: filepath.Join(t.Dir, "agents"),
		Limits:    benchLimits,
		PageSize:  500,
	}
}

// check fails the benchmark unless snap is a complete scan of the tree, so
// a broken generator can never be measured silently.
func (t *benchTree) check(tb testing.TB, snap *Snapshot) {
	tb.Helper()
	if snap == nil {
		tb.Fatal("no snapshot")
	}
	if n := snap.ErrorCount(); n > 0 {
		var first []string
		for _, p := range snap.Problems {
			if p.Severity == skill.SeverityError && len(first) < 5 {
				first = append(first, p.Path+": "+p.Rule+": "+p.Message)
			}
		}
		tb.Fatalf("generated tree has %d error problems, e.g.\n%s", n, strings.Join(first, "\n"))
	}
	if len(snap.Skills) != t.Skills || snap.VersionCount() != t.SkillVersions {
		tb.Fatalf("scanned %d skills / %d versions, generated %d / %d", len(snap.Skills), snap.VersionCount(), t.Skills, t.SkillVersions)
	}
	if len(snap.Agents) != t.Agents || snap.AgentVersionCount() != t.AgentVersions {
		tb.Fatalf("scanned %d agents / %d versions, generated %d / %d", len(snap.Agents), snap.AgentVersionCount(), t.Agents, t.AgentVersions)
	}
	if t.Skills != benchSkillsN || t.Agents != benchAgentsN {
		tb.Fatalf("tree has %d skills and %d agents, want %d and %d", t.Skills, t.Agents, benchSkillsN, benchAgentsN)
	}
}

var benchTreeOnce struct {
	sync.Once
	tree *benchTree
	err  error
}

// benchTreeFor returns the generated tree, generating it on first use.
func benchTreeFor(b *testing.B) *benchTree {
	b.Helper()
	benchTreeOnce.Do(func() {
		dir := os.Getenv("SKILLSERVER_BENCH_TREE")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "skillserver-bench-tree-"+strings.ReplaceAll(benchGenerator, "/", "-"))
		}
		start := time.Now()
		tree, generated, err := openOrGenerateBenchTree(dir)
		benchTreeOnce.tree, benchTreeOnce.err = tree, err
		if err == nil {
			verb := "reusing"
			if generated {
				verb = "generated"
			}
			b.Logf("%s bench tree %s in %v: %d skills (%d versions), %d agents (%d versions), %d files, %d bytes",
				verb, dir, time.Since(start).Round(time.Millisecond), tree.Skills, tree.SkillVersions,
				tree.Agents, tree.AgentVersions, tree.Files, tree.Bytes)
		}
	})
	if benchTreeOnce.err != nil {
		b.Fatal(benchTreeOnce.err)
	}
	return benchTreeOnce.tree
}

func readBenchMarker(dir string) (*benchTree, error) {
	data, err := os.ReadFile(filepath.Join(dir, benchMarker))
	if err != nil {
		return nil, err
	}
	var t benchTree
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("bench tree marker %s: %w", filepath.Join(dir, benchMarker), err)
	}
	t.Dir = dir
	return &t, nil
}

// openOrGenerateBenchTree reuses the tree in dir when its marker names
// this generator, else generates it into a sibling directory and renames
// that into place (so an interrupted generation never looks complete). It
// refuses to touch a non-empty directory without a marker.
func openOrGenerateBenchTree(dir string) (*benchTree, bool, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, false, err
	}
	if t, err := readBenchMarker(dir); err == nil {
		if t.Generator != benchGenerator {
			return nil, false, fmt.Errorf("%s was generated by %q, not %q: remove it to regenerate", dir, t.Generator, benchGenerator)
		}
		return t, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, false, fmt.Errorf("%s exists, is not empty and has no %s marker: not a generated bench tree; remove it or choose another SKILLSERVER_BENCH_TREE", dir, benchMarker)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, false, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".partial-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(tmp) // no-op once renamed
	t, err := generateBenchTree(tmp)
	if err != nil {
		return nil, false, err
	}
	_ = os.Remove(dir) // an empty directory (e.g. made by the script) is replaced
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have won the race; use its tree if complete.
		if t2, err2 := readBenchMarker(dir); err2 == nil && t2.Generator == benchGenerator {
			return t2, false, nil
		}
		return nil, false, err
	}
	t.Dir = dir
	return t, true, nil
}

// benchGen writes one tree. Every random choice comes from one PCG stream
// in a fixed order, so the same generator version writes the same bytes.
type benchGen struct {
	rng   *rand.Rand
	words []string
	root  string
	tree  *benchTree
	err   error
}

var benchReserved = map[string]bool{"null": true, "true": true, "false": true, "yes": true, "no": true,
	"on": true, "off": true, "y": true, "n": true, "nan": true, "inf": true}

func newBenchGen(root string) *benchGen {
	g := &benchGen{rng: rand.New(rand.NewPCG(benchSeed1, benchSeed2)), root: root,
		tree: &benchTree{Generator: benchGenerator}}
	// A vocabulary of pronounceable pseudo-words; sampled with a skew so a
	// few are frequent, as in prose, which keeps compression ratios
	// realistic (deflate gets text to roughly a third).
	common := strings.Fields("the a of to and in is for on with that this use when it as by be or from an are at run file skill agent code check step")
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr sk sl sp st tr ch sh th")
	vowels := strings.Fields("a e i o u ai ea ie io ou")
	codas := []string{"", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "ng"}
	seen := map[string]bool{}
	g.words = append(g.words, common...)
	for _, w := range common {
		seen[w] = true
	}
	for len(g.words) < 4000 {
		var sb strings.Builder
		for k := 1 + g.rng.IntN(3); k > 0; k-- {
			sb.WriteString(onsets[g.rng.IntN(len(onsets))])
			sb.WriteString(vowels[g.rng.IntN(len(vowels))])
		}
		sb.WriteString(codas[g.rng.IntN(len(codas))])
		w := sb.String()
		if !seen[w] && !benchReserved[w] && len(w) <= 12 {
			seen[w] = true
			g.words = append(g.words, w)
		}
	}
	return g
}

func (g *benchGen) word() string {
	return g.words[int(float64(len(g.words))*math.Pow(g.rng.Float64(), 3))]
}

func (g *benchGen) between(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

func (g *benchGen) chance(p float64) bool { return g.rng.Float64() < p }

// sentence appends n words, capitalised, ending with a period.
func (g *benchGen) sentence(b []byte, n int) []byte {
	for i := 0; i < n; i++ {
		w := g.word()
		if i == 0 {
			b = append(b, strings.ToUpper(w[:1])...)
			b = append(b, w[1:]...)
			continue
		}
		b = append(b, ' ')
		b = append(b, w...)
		if i < n-1 && g.chance(0.06) {
			b = append(b, ',')
		}
	}
	return append(b, '.')
}

func (g *benchGen) phrase(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ")
}

// description is a one-line plain YAML scalar of roughly 80-300 bytes.
func (g *benchGen) description() string {
	b := g.sentence(nil, g.between(8, 30))
	b = append(b, " Use when "...)
	b = append(b, g.phrase(g.between(3, 10))...)
	return string(append(b, '.'))
}

// markdown appends Markdown prose until b is size bytes long.
func (g *benchGen) markdown(b []byte, size int) []byte {
	for len(b) < size {
		switch r := g.rng.IntN(10); {
		case r == 0:
			b = append(b, "\n## "...)
			b = append(b, g.phrase(g.between(2, 5))...)
			b = append(b, "\n\n"...)
		case r <= 2:
			for k := g.between(2, 5); k > 0; k-- {
				b = append(b, "- "...)
				b = g.sentence(b, g.between(4, 12))
				b = append(b, '\n')
			}
			b = append(b, '\n')
		case r == 3:
			b = append(b, "```sh\n"...)
			for k := g.between(1, 4); k > 0; k-- {
				b = append(b, g.word()+" --"+g.word()+" "+g.word()+"/"+g.word()+"\n"...)
			}
			b = append(b, "```\n\n"...)
		default:
			for k := g.between(2, 5); k > 0; k-- {
				b = g.sentence(b, g.between(6, 18))
				b = append(b, ' ')
			}
			b = append(b, "\n\n"...)
		}
	}
	return benchFit(b, size)
}

// code appends script-like lines until b is size bytes long.
func (g *benchGen) code(b []byte, size int, lang string) []byte {
	if lang == "sh" {
		b = append(b, "#!/bin/sh\nset -eu\n\n"...)
	} else {
		b = append(b, "#!/usr/bin/env python3\n\"\"\""...)
		b = g.sentence(b, g.between(5, 12))
		b = append(b, "\"\"\"\n\nimport os\nimport sys\n\n"...)
	}
	for len(b) < size {
		if lang == "sh" {
			b = append(b, g.word()+" --"+g.word()+" \"$"+strconv.Itoa(g.between(1, 3))+"\" | grep -v "+g.word()+"\n"...)
			if g.chance(0.2) {
				b = append(b, "# "...)
				b = g.sentence(b, g.between(4, 10))
				b = append(b, '\n')
			}
			continue
		}
		fn := g.word() + "_" + g.word()
		b = append(b, "\ndef "+fn+"(path, "+g.word()+"=None):\n    \"\"\""...)
		b = g.sentence(b, g.between(4, 12))
		b = append(b, "\"\"\"\n"...)
		for k := g.between(2, 6); k > 0; k-- {
			b = append(b, "    "+g.word()+" = "+g.word()+"."+g.word()+"(path, \""+g.word()+"\")\n"...)
		}
		b = append(b, "    return "+g.word()+"\n"...)
	}
	return benchFit(b, size)
}

// jsonDoc appends a JSON document of about size bytes (it stays valid, so
// it may end a little past size).
func (g *benchGen) jsonDoc(b []byte, size int) []byte {
	b = append(b, "{\n  \"name\": \""+g.word()+"\",\n  \"items\": [\n"...)
	for i := 0; len(b) < size-40; i++ {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, "    {\"id\": "+strconv.Itoa(i)+", \"label\": \""+g.phrase(g.between(1, 4))+"\", \"weight\": "+strconv.Itoa(g.rng.IntN(1000))+"}"...)
	}
	return append(b, "\n  ]\n}\n"...)
}

// binary appends incompressible bytes behind a PNG signature.
func (g *benchGen) binary(b []byte, size int) []byte {
	b = append(b, "\x89PNG\r\n\x1a\n"...)
	for len(b)+8 <= size {
		v := g.rng.Uint64()
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
	}
	return b
}

// benchFit cuts b to size bytes, ending with a newline.
func benchFit(b []byte, size int) []byte {
	if len(b) >= size {
		b = b[:size-1]
	}
	return append(b, '\n')
}

func (g *benchGen) write(rel string, data []byte, mode os.FileMode) {
	if g.err != nil {
		return
	}
	full := filepath.Join(g.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		g.err = err
		return
	}
	if err := os.WriteFile(full, data, mode); err != nil {
		g.err = err
		return
	}
	if err := os.Chmod(full, mode); err != nil { // not subject to umask
		g.err = err
		return
	}
	if err := os.Chtimes(full, benchMTime, benchMTime); err != nil {
		g.err = err
		return
	}
	g.tree.Files++
	g.tree.Bytes += int64(len(data))
	if mode&0o111 != 0 {
		g.tree.Executables++
	}
}

type benchResource struct {
	kind int
	path string
	data []byte
	mode os.FileMode
}

// resource generates resource number k of a version. kind picks its type
// (0-99, as drawn for a new file); a rewritten file keeps its old kind.
func (g *benchGen) resource(k, kind int) benchResource {
	size := g.between(1<<10, 32<<10)
	r := benchResource{kind: kind, mode: 0o644}
	switch {
	case kind < 40:
		r.path = fmt.Sprintf("references/%s-%d.md", g.word(), k)
		r.data = g.markdown([]byte("# "+g.phrase(3)+"\n\n"), size)
	case kind < 55:
		r.path = fmt.Sprintf("scripts/%s_%d.py", g.word(), k)
		r.data = g.code(nil, size, "py")
		if g.chance(0.1) {
			r.mode = 0o755
		}
	case kind < 65:
		r.path = fmt.Sprintf("scripts/%s-%d.sh", g.word(), k)
		r.data = g.code(nil, size, "sh")
		if g.chance(0.5) {
			r.mode = 0o755
		}
	case kind < 82:
		r.path = fmt.Sprintf("assets/%s-%d.json", g.word(), k)
		r.data = g.jsonDoc(nil, size)
	case kind < 95:
		r.path = fmt.Sprintf("templates/%s-%d.txt", g.word(), k)
		r.data = g.markdown(nil, size)
	default:
		r.path = fmt.Sprintf("assets/%s-%d.png", g.word(), k)
		r.data = g.binary(nil, size)
	}
	return r
}

func (g *benchGen) skillMD(name, version, subagent string) []byte {
	b := []byte("---\nname: " + name + "\ndescription: " + g.description() + "\n")
	if g.chance(0.3) {
		b = append(b, "license: Apache-2.0\n"...)
	}
	if g.chance(0.2) {
		b = append(b, "allowed-tools: Read Grep Glob Bash\n"...)
	}
	b = append(b, "metadata:\n"...)
	if version != "" {
		b = append(b, "  version: \""+version+"\"\n"...)
	}
	b = append(b, "  author: "+g.word()+"\n  tags: ["+g.word()+", "+g.word()+", "+g.word()+"]\n"...)
	if g.chance(0.3) {
		b = append(b, "  examples:\n    - "+g.phrase(g.between(3, 8))+"\n    - "+g.phrase(g.between(3, 8))+"\n"...)
	}
	if subagent != "" {
		b = append(b, "  subagent: "+subagent+"\n"...)
	}
	if g.chance(0.02) {
		b = append(b, "  published: \"2025-11-29T10:00:00Z\"\n"...)
	}
	b = append(b, "---\n\n# "+name+"\n\n"...)
	return g.markdown(b, max(len(b)+64, g.between(1<<10, 4<<10)))
}

func (g *benchGen) agentMD(name, version string) []byte {
	b := []byte("---\nname: " + name + "\ndescription: " + g.description() + "\n")
	if g.chance(0.7) {
		b = append(b, "tools: [read_file, grep, glob, run_shell]\n"...)
	}
	switch x := g.rng.IntN(10); {
	case x < 3:
		b = append(b, "modelRole: Main\n"...)
	case x == 3:
		b = append(b, "modelRole: Compaction\n"...)
	}
	if g.chance(0.4) {
		b = append(b, "timeoutSeconds: "+strconv.Itoa(g.between(5, 600))+"\n"...)
	}
	if g.chance(0.1) {
		b = append(b, "prefillTimeoutSeconds: "+strconv.Itoa(g.between(5, 3600))+"\n"...)
	}
	if g.chance(0.5) {
		b = append(b, "visibility: "+[]string{"user-facing", "internal"}[g.rng.IntN(2)]+"\n"...)
	}
	if g.chance(0.2) {
		b = append(b, "emitStructuredFindings: true\n"...)
	}
	b = append(b, "metadata:\n  tags: ["+g.word()+", "+g.word()+"]\n"...)
	if version != "" {
		b = append(b, "  version: \""+version+"\"\n"...)
	}
	b = append(b, "---\n\nYou are "+name+". "...)
	return g.markdown(b, max(len(b)+64, g.between(1<<10, 4<<10)))
}

var benchVersions = []string{"1.0.0", "1.1.0", "2.0.0"}

func generateBenchTree(root string) (*benchTree, error) {
	g := newBenchGen(root)
	t := g.tree

	// Agent names first: some skills route to them.
	agents := make([]string, benchAgentsN)
	for i := range agents {
		agents[i] = fmt.Sprintf("%s-%s-%03d", g.word(), g.word(), i)
	}

	for i := 0; i < benchSkillsN && g.err == nil; i++ {
		name := fmt.Sprintf("%s-%s-%04d", g.word(), g.word(), i)
		versioned := g.chance(0.10)
		withRes := g.chance(0.30)
		subagent := ""
		if g.chance(0.05) {
			subagent = agents[g.rng.IntN(len(agents))]
		}
		t.Skills++
		if withRes {
			t.SkillsWithResources++
		}
		nVersions := 1
		if versioned {
			nVersions = g.between(2, 3)
			t.VersionedSkills++
		}
		var res []benchResource
		for v := 0; v < nVersions; v++ {
			dir, version := "skills/"+name, ""
			switch {
			case versioned:
				version = benchVersions[v]
				dir += "/" + version
			case g.chance(0.9):
				version = fmt.Sprintf("%d.%d.%d", g.between(0, 3), g.between(0, 12), g.between(0, 9))
			}
			md := g.skillMD(name, version, subagent)
			g.write(dir+"/SKILL.md", md, 0o644)
			t.SkillVersions++
			t.SkillMDFiles++
			t.SkillMDBytes += int64(len(md))
			if withRes {
				if v == 0 {
					for k := g.between(1, 5); k > 0; k-- {
						res = append(res, g.resource(k, g.rng.IntN(100)))
					}
				} else {
					// A later version: most files as before, one rewritten.
					j := g.rng.IntN(len(res))
					nr := g.resource(j+1, res[j].kind)
					nr.path, nr.mode = res[j].path, res[j].mode
					res[j] = nr
				}
				for _, r := range res {
					g.write(dir+"/"+r.path, r.data, r.mode)
					t.ResourceFiles++
					t.ResourceBytes += int64(len(r.data))
				}
			}
			if !versioned && version != "" && subagent == "" {
				switch {
				case !withRes && t.TouchPlain == "":
					t.TouchPlain = name
				case withRes && len(res) >= 3 && t.TouchArchive == "":
					t.TouchArchive, t.TouchArchiveN = name, len(res)
				}
			}
		}
	}
	for _, name := range agents {
		if g.err != nil {
			break
		}
		t.Agents++
		if g.chance(0.15) {
			for v := g.between(2, 3) - 1; v >= 0; v-- {
				version := benchVersions[v]
				declared := version
				if g.chance(0.3) {
					declared = ""
				}
				md := g.agentMD(name, declared)
				g.write("agents/"+name+"/"+version+".md", md, 0o644)
				t.AgentVersions++
				t.AgentFiles++
				t.AgentBytes += int64(len(md))
			}
			continue
		}
		version := ""
		if g.chance(0.7) {
			version = fmt.Sprintf("1.%d.%d", g.between(0, 9), g.between(0, 9))
		}
		md := g.agentMD(name, version)
		g.write("agents/"+name+".md", md, 0o644)
		t.AgentVersions++
		t.AgentFiles++
		t.AgentBytes += int64(len(md))
	}
	if g.err != nil {
		return nil, g.err
	}
	if t.TouchPlain == "" || t.TouchArchive == "" {
		return nil, errors.New("generator chose no skill to touch")
	}
	marker, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, benchMarker), append(marker, '\n'), 0o644); err != nil {
		return nil, err
	}
	return t, nil
}

// Peak RSS (Linux): writing 5 to /proc/self/clear_refs resets VmHWM to the
// current RSS; VmHWM is the peak since.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func procStatusBytes(field string) (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// BenchmarkColdScan measures Build: a full scan with a fresh file cache
// (the OS page cache is warm). MB/s is over the tree's file bytes. Memory
// metrics, taken once after the timed loop:
//
//   - B/op, allocs/op: everything the scan allocated (TotalAlloc), garbage
//     included.
//   - live-heap-B: HeapInuse after two GCs with the last snapshot alive,
//     minus HeapInuse before the loop: what the snapshot alone keeps
//     alive. Build's file cache is garbage by then; a Catalog's cache
//     shares the snapshot's byte slices, so it adds little to this.
//   - peak-rss-B: the process's VmHWM during the loop, after returning
//     free memory to the OS and resetting VmHWM before it. It includes the
//     Go runtime and whatever else the process holds, and depends on GOGC.
//   - store/file-B: Store.Bytes() (distinct blobs: files and archives) over
//     file bytes.
func BenchmarkColdScan(b *testing.B) {
	tree := benchTreeFor(b)
	src := tree.source()
	ctx := context.Background()
	b.SetBytes(tree.Bytes)
	b.ReportAllocs()

	debug.FreeOSMemory()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peakOK := resetPeakRSS()
	b.ResetTimer()
	var snap *Snapshot
	for i := 0; i < b.N; i++ {
		snap = nil // let the previous snapshot go before the next scan
		s, err := Build(ctx, src, 1)
		if err != nil {
			b.Fatal(err)
		}
		snap = s
	}
	b.StopTimer()
	peak, peakRead := procStatusBytes("VmHWM")
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	tree.check(b, snap)

	fileBytes := float64(tree.Bytes)
	live := float64(int64(after.HeapInuse) - int64(before.HeapInuse))
	b.ReportMetric(float64(tree.Files), "files/op")
	b.ReportMetric(live, "live-heap-B")
	b.ReportMetric(live/fileBytes, "live-heap/file-B")
	if peakOK && peakRead {
		b.ReportMetric(float64(peak), "peak-rss-B")
		b.ReportMetric(float64(peak)/fileBytes, "peak-rss/file-B")
	}
	b.ReportMetric(float64(snap.Store.Bytes())/fileBytes, "store/file-B")
	runtime.KeepAlive(snap)
}

// BenchmarkReloadOneSkillUpdate measures the file watcher's path: one
// skill's SKILL.md is rewritten (untimed), then Update names that skill.
func BenchmarkReloadOneSkillUpdate(b *testing.B) { benchReloadOneSkill(b, false) }

// BenchmarkReloadOneSkillFull measures the SIGHUP / periodic path: the
// same touch, then a full Reload (unchanged files come from the cache).
func BenchmarkReloadOneSkillFull(b *testing.B) { benchReloadOneSkill(b, true) }

// benchCatalogs holds the loaded Catalog of the last reload mode used, for
// the whole process: the framework calls a benchmark several times (b.N
// probing, -count), and each cold load costs seconds. Its state carries
// over, as in a running server. Only one is alive at a time, as in a
// server, so the other's heap does not slow the garbage collector.
var benchCatalogs struct {
	sync.Mutex
	byMode   map[string]*Catalog
	touchers map[string]*benchToucher
}

func benchCatalog(b *testing.B, tree *benchTree, mode string) *Catalog {
	benchCatalogs.Lock()
	defer benchCatalogs.Unlock()
	if c, ok := benchCatalogs.byMode[mode]; ok {
		return c
	}
	clear(benchCatalogs.byMode)
	runtime.GC()
	c := New(tree.source(), slog.New(slog.DiscardHandler), Options{})
	snap, err := c.Reload(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	tree.check(b, snap)
	if benchCatalogs.byMode == nil {
		benchCatalogs.byMode = map[string]*Catalog{}
	}
	benchCatalogs.byMode[mode] = c
	return c
}

// benchToucher rewrites one SKILL.md with new bytes of the same size (a
// revision counter replaces its last line), never repeating content within
// the process, and restores the generated file afterwards.
type benchToucher struct {
	path string
	orig []byte
	last []byte
	rev  int
}

func touchFor(b *testing.B, tree *benchTree, name string) *benchToucher {
	benchCatalogs.Lock()
	defer benchCatalogs.Unlock()
	t, ok := benchCatalogs.touchers[name]
	if !ok {
		p := filepath.Join(tree.Dir, "skills", name, "SKILL.md")
		orig, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		t = &benchToucher{path: p, orig: orig}
		if benchCatalogs.touchers == nil {
			benchCatalogs.touchers = map[string]*benchToucher{}
		}
		benchCatalogs.touchers[name] = t
	}
	b.Cleanup(func() {
		if err := os.WriteFile(t.path, t.orig, 0o644); err == nil {
			_ = os.Chtimes(t.path, benchMTime, benchMTime)
		}
	})
	return t
}

func (t *benchToucher) touch(b *testing.B) {
	t.rev++
	tag := fmt.Sprintf("\nrevision %09d\n", t.rev)
	buf := append([]byte(nil), t.orig...)
	copy(buf[len(buf)-len(tag):], tag)
	if err := os.WriteFile(t.path, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	t.last = buf
}

var benchReloadLabels = pprof.Labels("bench", "reload")

func benchReloadOneSkill(b *testing.B, full bool) {
	tree := benchTreeFor(b)
	mode := "update"
	if full {
		mode = "full"
	}
	c := benchCatalog(b, tree, mode)
	ctx := context.Background()
	for _, tc := range []struct{ name, skill string }{
		{"skillmd-only", tree.TouchPlain},
		{fmt.Sprintf("with-%d-resources", tree.TouchArchiveN), tree.TouchArchive},
	} {
		b.Run(tc.name, func(b *testing.B) {
			toucher := touchFor(b, tree, tc.skill)
			changes := scan.Changes{Skills: map[string]bool{tc.skill: true}}
			var snap *Snapshot
			var err error
			var read, rescanned int
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				toucher.touch(b)
				b.StartTimer()
				// The label marks the timed call's samples in a CPU profile,
				// including those of the goroutines it scans on, which do
				// not have this frame on their stacks (bench-scan.sh uses
				// pprof -tagfocus bench=reload).
				pprof.Do(ctx, benchReloadLabels, func(ctx context.Context) {
					if full {
						snap, err = c.Reload(ctx)
					} else {
						snap, err = c.Update(ctx, changes)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
				read += snap.FileCacheMisses
				rescanned += snap.Rescanned
			}
			b.StopTimer()
			tree.check(b, snap)
			sk, ok := snap.Skill(tc.skill)
			if !ok || sk.Latest.SkillMD != content.Sum(toucher.last) {
				b.Fatalf("the reload did not publish the rewritten %s", toucher.path)
			}
			b.ReportMetric(float64(read)/float64(b.N), "files-read/op")
			b.ReportMetric(float64(rescanned)/float64(b.N), "rescanned/op")
		})
	}
}
