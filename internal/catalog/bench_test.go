package catalog

// Scan benchmarks over a generated, realistic tree (docs/benchmarks.md,
// scripts/bench-scan.sh).
//
// The tree: 10,000 skills and 1,000 sub-agents from internal/benchtree,
// generated into $SKILLSERVER_BENCH_TREE, or into $TMPDIR/skillserver-bench-tree-<gen>
// when that is unset, and reused while its marker file says it was made by
// this generator. A per-process temporary directory is not used because it
// could not be removed without a TestMain and the tree is ~200 MB.
//
// Nothing here runs in a normal `go test`: the tree is generated only when a
// benchmark asks for it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adrg/frontmatter"
	"github.com/klauspost/compress/flate"
	"go.yaml.in/yaml/v3"

	"github.com/skillserver/skillserver/internal/benchtree"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

// benchLimits mirror the server's configuration defaults
// (internal/config: max_file_bytes, max_files, max_total_bytes).
var benchLimits = scan.Limits{MaxFileBytes: 10 << 20, MaxFiles: 1000, MaxTotalBytes: 50 << 20}

// benchTree is the generated tree (internal/benchtree).
type benchTree struct{ *benchtree.Tree }

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
	if t.Skills != benchtree.DefaultSkills || t.Agents != benchtree.DefaultAgents {
		tb.Fatalf("tree has %d skills and %d agents, want %d and %d", t.Skills, t.Agents, benchtree.DefaultSkills, benchtree.DefaultAgents)
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
			dir = filepath.Join(os.TempDir(), "skillserver-bench-tree-"+strings.ReplaceAll(benchtree.Generator, "/", "-"))
		}
		start := time.Now()
		t, generated, err := benchtree.OpenOrGenerate(dir, benchtree.DefaultSkills, benchtree.DefaultAgents)
		benchTreeOnce.err = err
		if err == nil {
			tree := &benchTree{t}
			benchTreeOnce.tree = tree
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

// BenchmarkScanFloor measures the least work any cold scan that keeps
// deflated archives must do on the tree, with nothing of this program's
// own: list the folders, read and SHA-256 every file (what `find | xargs
// -P$(nproc) sha256sum` does), and deflate every resource file at
// content.CompressionLevel, on GOMAXPROCS workers. "frontmatter" also
// parses the front matter of every SKILL.md and agent file with the
// libraries the scan uses (adrg/frontmatter, yaml.v3 into a yaml.Node),
// and nothing else of it. The SKILL.md files that archives hold are not
// deflated here, so either floor is, if anything, low. Its time over
// sha256sum's is the smallest ratio the cold-scan goal could see
// (docs/benchmarks.md).
func BenchmarkScanFloor(b *testing.B) {
	tree := benchTreeFor(b)
	for _, parse := range []bool{false, true} {
		name := "deflate"
		if parse {
			name = "deflate+frontmatter"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(tree.Bytes)
			for b.Loop() {
				scanFloor(b, tree, parse)
			}
		})
	}
}

// yamlV3 is front matter in YAML as the scan reads it: yaml.v3 (adrg/
// frontmatter's own YAML format is yaml.v2's).
var yamlV3 = frontmatter.NewFormat("---", "---", yaml.Unmarshal)

func scanFloor(b *testing.B, tree *benchTree, parse bool) {
	paths := make(chan string, 256)
	var deflated, files, parsed atomic.Int64
	var wg sync.WaitGroup
	skills := filepath.Join(tree.Dir, "skills") + string(filepath.Separator)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			fw, err := flate.NewWriter(io.Discard, content.CompressionLevel)
			if err != nil {
				b.Error(err)
				return
			}
			for p := range paths {
				data, err := os.ReadFile(p)
				if err != nil {
					b.Error(err)
					continue
				}
				_ = sha256.Sum256(data)
				files.Add(1)
				if filepath.Base(p) == skill.FileName || !strings.HasPrefix(p, skills) {
					if parse {
						var doc yaml.Node
						if _, err := frontmatter.Parse(bytes.NewReader(data), &doc, yamlV3); err != nil || doc.Kind != yaml.DocumentNode {
							b.Errorf("%s: no front matter parsed (%v)", p, err)
						}
						parsed.Add(1)
					}
					continue
				}
				fw.Reset(io.Discard)
				_, _ = fw.Write(data)
				_ = fw.Close()
				deflated.Add(int64(len(data)))
			}
		})
	}
	err := filepath.WalkDir(tree.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
			paths <- p
		}
		return err
	})
	close(paths)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	if files.Load() != int64(tree.Files) {
		b.Fatalf("read %d files, the tree has %d", files.Load(), tree.Files)
	}
	b.ReportMetric(float64(deflated.Load()), "deflated-B/op")
	b.ReportMetric(float64(parsed.Load()), "parsed/op")
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
			_ = os.Chtimes(t.path, benchtree.ModTime, benchtree.ModTime)
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
