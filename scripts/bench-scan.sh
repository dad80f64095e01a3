#!/usr/bin/env bash
# bench-scan.sh: measure the catalog scan against the goals in
# docs/benchmarks.md, on a generated tree of 10,000 skills and 1,000 agents.
#
#   1. generate the tree (or reuse it), via the Go benchmark's generator;
#   2. time `find | xargs -P$(nproc) sha256sum` over the same files with
#      hyperfine (page cache warm), the goal's measure: sha256sum on every
#      core;
#   3. run the Go benchmarks (cold scan, one-skill Update, full Reload)
#      with -count $BENCH_COUNT;
#   4. repeat the cold scan on one core (-cpu 1: GOMAXPROCS=1, so one scan
#      worker, and the garbage collector shares its core), for reference;
#   5. paired rounds: sha256sum (3 runs), then the scan floor
#      (BenchmarkScanFloor/deflate+frontmatter: reading, hashing, deflating
#      and parsing front matter with nothing else), then one cold scan, so
#      all see the same load on a shared machine; the cold-scan goal's
#      verdict is the median of the rounds' ratios, and the floor's ratio
#      says how near the goal any scan keeping deflate could come;
#   6. measure the peak RSS of a process doing one cold scan (/usr/bin/time);
#   7. CPU profiles of each path (pprof -top);
#   8. print a summary against the goals, with the load averages seen.
#
# Environment:
#   SKILLSERVER_BENCH_TREE  tree directory (default $TMPDIR/skillserver-bench-tree)
#   BENCH_OUT               output directory (default $TMPDIR/skillserver-bench)
#   BENCH_COUNT             -count for the Go benchmarks (default 5)
#   BENCH_COUNT_1CPU        -count for the one-core cold scan (default 3; 0 skips it)
#   BENCH_RUNS              hyperfine runs (default 10)
#   BENCH_PAIRS             paired sha256sum / cold scan rounds (default 15; 0 skips them)
#   BENCH_PROFILE           0 skips the CPU profiles (default 1)
#   BENCH_BENCHSTAT         0 skips benchstat (default 1; needs the Go module proxy)
#
# Requires go, hyperfine (apt-get install -y hyperfine), sha256sum, find,
# xargs, awk and GNU time at /usr/bin/time (apt-get install -y time).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TMPDIR:-/tmp}
TREE=${SKILLSERVER_BENCH_TREE:-$tmp/skillserver-bench-tree}
OUT=${BENCH_OUT:-$tmp/skillserver-bench}
COUNT=${BENCH_COUNT:-5}
COUNT1=${BENCH_COUNT_1CPU:-3}
RUNS=${BENCH_RUNS:-10}
PAIRS=${BENCH_PAIRS:-15}
PROFILE=${BENCH_PROFILE:-1}
BENCHSTAT=${BENCH_BENCHSTAT:-1}
GO=${GO:-go}

need() {
	command -v "$1" >/dev/null 2>&1 || { echo "bench-scan: $1 is required${2:+ ($2)}" >&2; exit 1; }
}
need "$GO"
need hyperfine "apt-get install -y hyperfine"
need sha256sum
need find
need xargs
need awk
[ -x /usr/bin/time ] || { echo "bench-scan: /usr/bin/time is required (apt-get install -y time)" >&2; exit 1; }

mkdir -p "$OUT"
TREE=$(mkdir -p "$TREE" && cd "$TREE" && pwd)
export SKILLSERVER_BENCH_TREE=$TREE
# The goal's baseline: sha256sum over every file, on every core.
SHA256SUM="find '$TREE/skills' '$TREE/agents' -type f -print0 | xargs -0 -P$(nproc) sha256sum > /dev/null"
pkg=$repo/internal/catalog
bin=$OUT/catalog.test
# Each step notes the load average (1, 5, 15 min) as it starts: the
# machine may be shared, and the benchmarks' own threads count in it too.
: >"$OUT/load.txt"
step() {
	printf '\n== %s\n' "$*"
	printf '%s\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '? ? ?')" "$*" >>"$OUT/load.txt"
}

step "generate (or reuse) the tree in $TREE"
(cd "$repo" && "$GO" test -run '^$' -bench BenchmarkColdScan -benchtime 1x ./internal/catalog/) | tee "$OUT/generate.txt"
marker=$TREE/.skillserver-bench-tree.json
[ -f "$marker" ] || { echo "bench-scan: no marker $marker after generation" >&2; exit 1; }
mval() { sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$marker"; }
files=$(mval files)
bytes=$(mval bytes)
found_files=$(find "$TREE/skills" "$TREE/agents" -type f | wc -l)
found_bytes=$(find "$TREE/skills" "$TREE/agents" -type f -printf '%s\n' | awk '{s += $1} END {printf "%d", s}')
if [ "$found_files" != "$files" ] || [ "$found_bytes" != "$bytes" ]; then
	echo "bench-scan: the marker says $files files / $bytes bytes, find sees $found_files / $found_bytes; regenerate the tree" >&2
	exit 1
fi
cp "$marker" "$OUT/tree.json"

step "build the test binary"
(cd "$repo" && "$GO" test -c -o "$bin" ./internal/catalog/)

step "sha256sum over the same $files files ($bytes bytes), page cache warm"
# find+xargs run sha256sum over every file: xargs splits the list into
# batches of its command-line size and runs nproc of them at a time, each
# sha256sum single-threaded. `cat` (one at a time) is the cost of reading
# the bytes alone, for reference.
hyperfine --warmup 3 --runs "$RUNS" --export-csv "$OUT/hyperfine.csv" --export-json "$OUT/hyperfine.json" \
	-n sha256sum "$SHA256SUM" \
	-n cat "find '$TREE/skills' '$TREE/agents' -type f -print0 | xargs -0 cat > /dev/null" | tee "$OUT/hyperfine.txt"

step "Go benchmarks (-count $COUNT)"
(cd "$pkg" && "$bin" -test.run '^$' -test.bench '^Benchmark(ColdScan|ReloadOneSkillUpdate|ReloadOneSkillFull)$' \
	-test.benchmem -test.count "$COUNT") | tee "$OUT/bench.txt"

if [ "$BENCHSTAT" != 0 ]; then
	step "benchstat"
	# With 5 samples benchstat can give a median's range at 90% confidence,
	# not at its default 95%.
	(cd "$repo" && "$GO" run golang.org/x/perf/cmd/benchstat@latest -confidence 0.9 "$OUT/bench.txt") | tee "$OUT/benchstat.txt" ||
		echo "(benchstat unavailable; the summary below has medians)"
fi

: >"$OUT/bench-1cpu.txt"
if [ "$COUNT1" != 0 ]; then
	step "cold scan on one core (-cpu 1, -count $COUNT1)"
	(cd "$pkg" && "$bin" -test.run '^$' -test.bench '^BenchmarkColdScan$' -test.cpu 1 -test.benchmem \
		-test.count "$COUNT1") | tee "$OUT/bench-1cpu.txt"
fi

# ns/op of one cold scan in a fresh process (the tree's marker checked).
cold_once() {
	(cd "$pkg" && "$bin" -test.run '^$' -test.bench '^BenchmarkColdScan$' -test.benchtime 1x "$@") |
		awk '/^BenchmarkColdScan/ {print $3}'
}

: >"$OUT/pairs.txt"
if [ "$PAIRS" != 0 ]; then
	step "paired rounds: sha256sum (3 runs), the scan floor, then one cold scan, $PAIRS times"
	# The hyperfine and Go benchmark steps above are minutes apart; on a
	# shared machine the load changes in between, and the ratio with it.
	for i in $(seq 1 "$PAIRS"); do
		hyperfine --warmup 1 --runs 3 --export-csv "$OUT/pair-sha.csv" \
			-n sha256sum "$SHA256SUM" >/dev/null
		sha=$(awk -F, '$1 == "sha256sum" {print $4}' "$OUT/pair-sha.csv")
		floor=$(cd "$pkg" && "$bin" -test.run '^$' -test.bench '^BenchmarkScanFloor$/^deflate\+frontmatter$' -test.benchtime 1x |
			awk '/^BenchmarkScanFloor/ {print $3}')
		cold=$(cold_once)
		printf 'pair %d sha256sum %s coldscan %.3f load %s floor %.3f\n' "$i" "$sha" "$(awk -v c="$cold" 'BEGIN {print c / 1e9}')" \
			"$(cut -d' ' -f1 /proc/loadavg)" "$(awk -v c="$floor" 'BEGIN {print c / 1e9}')" | tee -a "$OUT/pairs.txt"
	done
	rm -f "$OUT/pair-sha.csv"
fi

step "peak RSS of one cold scan (GNU time, 3 runs) and of an idle test process"
rss_kb() { # prints "Maximum resident set size" in kB of the command
	/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
}
: >"$OUT/rss.txt"
idle=$(cd "$pkg" && rss_kb "$bin" -test.run '^$')
echo "idle $idle" | tee -a "$OUT/rss.txt"
for i in 1 2 3; do
	kb=$(cd "$pkg" && rss_kb "$bin" -test.run '^$' -test.bench '^BenchmarkColdScan$' -test.benchtime 1x)
	echo "coldscan $kb" | tee -a "$OUT/rss.txt"
done

if [ "$PROFILE" != 0 ]; then
	step "CPU profiles"
	(cd "$pkg" && "$bin" -test.run '^$' -test.bench '^BenchmarkColdScan$' -test.benchtime 1x \
		-test.cpuprofile "$OUT/coldscan.cpu" >/dev/null)
	"$GO" tool pprof -top -nodecount 25 "$bin" "$OUT/coldscan.cpu" >"$OUT/coldscan.top" 2>/dev/null
	"$GO" tool pprof -top -cum -nodecount 40 "$bin" "$OUT/coldscan.cpu" >"$OUT/coldscan.cum" 2>/dev/null
	# The reload profiles also hold the catalog's first (cold) load. The
	# benchmark labels its timed calls bench=reload (pprof.Do), and the
	# goroutines they scan on inherit the label, so -tagfocus keeps exactly
	# the timed work (a -focus on a frame would miss the scan workers, whose
	# stacks start at runJobs). The garbage collector's background workers
	# carry no label: their share is in the unfiltered profile.
	(cd "$pkg" && "$bin" -test.run '^$' -test.bench '^BenchmarkReloadOneSkillUpdate$/skillmd-only' -test.benchtime 50x \
		-test.cpuprofile "$OUT/update.cpu" >/dev/null)
	"$GO" tool pprof -top -cum -tagfocus 'bench=reload' -nodecount 40 "$bin" "$OUT/update.cpu" >"$OUT/update.cum" 2>/dev/null
	(cd "$pkg" && "$bin" -test.run '^$' -test.bench '^BenchmarkReloadOneSkillFull$/skillmd-only' -test.benchtime 3x \
		-test.cpuprofile "$OUT/full.cpu" >/dev/null)
	"$GO" tool pprof -top -cum -tagfocus 'bench=reload' -nodecount 40 "$bin" "$OUT/full.cpu" >"$OUT/full.cum" 2>/dev/null
	sed -n '1,35p' "$OUT/coldscan.top"
	echo "(cumulative views: $OUT/coldscan.cum, $OUT/update.cum, $OUT/full.cum)"
fi

step "summary"
{
	hf() { awk -F, -v n="$1" -v c="$2" '$1 == n {print $c}' "$OUT/hyperfine.csv"; }
	sha_med=$(hf sha256sum 4); sha_min=$(hf sha256sum 7); sha_max=$(hf sha256sum 8)
	cat_med=$(hf cat 4)
	echo "tree: $files files, $bytes bytes ($(mval skills) skills / $(mval skillVersions) versions, $(mval agents) agents / $(mval agentVersions) versions)"
	cold1=$(awk '/^BenchmarkColdScan/ {print $3}' "$OUT/bench-1cpu.txt" | sort -n |
		awk '{a[NR] = $1} END {if (NR) printf "%.3f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1e9}')
	awk -v sha="$sha_med" -v shamin="$sha_min" -v shamax="$sha_max" -v catm="$cat_med" -v fbytes="$bytes" \
		-v rssfile="$OUT/rss.txt" -v pairfile="$OUT/pairs.txt" -v loadfile="$OUT/load.txt" -v cold1="$cold1" '
	function med(key,   n, i, j, t, a) {
		n = cnt[key]
		for (i = 1; i <= n; i++) a[i] = val[key, i]
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		lo[key] = a[1]; hi[key] = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name)
		if (!(name in seen)) { seen[name] = 1; order[++nn] = name }
		for (i = 3; i < NF; i += 2) { k = name SUBSEP $(i + 1); val[k, ++cnt[k]] = $i }
	}
	function verdict(x, goal) { return x <= goal ? "MET" : "NOT MET" }
	END {
		printf "%-48s %12s %12s %12s %10s\n", "benchmark (median of runs)", "ms/op", "min", "max", "MB/op"
		for (o = 1; o <= nn; o++) {
			n = order[o]; k = n SUBSEP "ns/op"; m = med(k)
			printf "%-48s %12.1f %12.1f %12.1f %10.1f\n", n, m / 1e6, lo[k] / 1e6, hi[k] / 1e6, med(n SUBSEP "B/op") / 1e6
			ms[n] = m / 1e6
		}
		while ((getline line < rssfile) > 0) { split(line, f, " "); if (f[1] == "idle") idle = f[2] * 1024; else rss[++nr] = f[2] * 1024 }
		for (i = 1; i <= nr; i++) val["rss", i] = rss[i]; cnt["rss"] = nr; peak = med("rss")
		cold = ms["BenchmarkColdScan"] / 1000
		np = 0
		while ((getline line < pairfile) > 0) {
			split(line, f, " "); np++
			val["psha", np] = f[4]; val["pcold", np] = f[6]; val["pratio", np] = f[6] / f[4]
			val["pfloor", np] = f[10]; val["pfratio", np] = f[10] / f[4]
		}
		cnt["psha"] = cnt["pcold"] = cnt["pratio"] = cnt["pfloor"] = cnt["pfratio"] = np
		nl = 0
		while ((getline line < loadfile) > 0) { split(line, f, " "); val["load", ++nl] = f[1] }
		cnt["load"] = nl
		printf "\nsha256sum: median %.3f s (min %.3f, max %.3f); cat alone %.3f s\n", sha, shamin, shamax, catm
		if (nl) { lm = med("load"); printf "load average (1 min) as each step started: %.2f to %.2f (median %.2f)\n", lo["load"], hi["load"], lm }
		if (np) {
			r = med("pratio"); rlo = lo["pratio"]; rhi = hi["pratio"]
			printf "\nGOAL cold scan <= 1.5x sha256sum, %d paired rounds: median ratio %.2fx (%.2f to %.2f; cold %.2f s, sha256sum %.3f s) -> %s\n", np, r, rlo, rhi, med("pcold"), med("psha"), verdict(r, 1.5)
			printf "  the floor (read, hash, deflate, parse front matter; nothing else): median %.2fx (%.2f to %.2f; %.2f s)\n", med("pfratio"), lo["pfratio"], hi["pfratio"], med("pfloor")
			printf "  unpaired (Go benchmarks vs hyperfine, minutes apart): %.2f s vs %.3f s = %.2fx\n", cold, sha, cold / sha
		} else {
			printf "\nGOAL cold scan <= 1.5x sha256sum: %.2f s vs %.3f s = %.2fx -> %s\n", cold, sha, cold / sha, verdict(cold / sha, 1.5)
		}
		if (cold1 != "") printf "  for reference, the scan on one core (-cpu 1): %.2f s vs %.3f s = %.2fx (would be %s)\n", cold1, sha, cold1 / sha, verdict(cold1 / sha, 1.5)
		printf "GOAL memory <= 2.5x file bytes (%d B):\n", fbytes
		printf "  peak RSS of a process doing one cold scan: %.0f MB = %.2fx -> %s (idle test process: %.0f MB)\n", peak / 1e6, peak / fbytes, verdict(peak / fbytes, 2.5), idle / 1e6
		k = "BenchmarkColdScan" SUBSEP "peak-rss/file-B"; if (cnt[k]) { m = med(k); printf "  in-benchmark VmHWM during the scan:         %.2fx (median; %.2f to %.2f) -> %s\n", m, lo[k], hi[k], verdict(m, 2.5) }
		k = "BenchmarkColdScan" SUBSEP "live-heap/file-B"; if (cnt[k]) printf "  live heap after the scan (snapshot held):  %.2fx (median) -> %s\n", med(k), verdict(med(k), 2.5)
		k = "BenchmarkColdScan" SUBSEP "store/file-B"; if (cnt[k]) printf "  of which content store (files + archives): %.2fx\n", med(k)
		for (o = 1; o <= nn; o++) {
			n = order[o]
			if (n ~ /ReloadOneSkillUpdate/) printf "GOAL reload after touching one skill < 50 ms (the file watch), %s: %.1f ms -> %s\n", substr(n, 10), ms[n], (ms[n] < 50 ? "MET" : "NOT MET")
			if (n ~ /ReloadOneSkillFull/) printf "full rescan (SIGHUP, timer, POST /-/reload; stats every entry, no goal), %s: %.1f ms\n", substr(n, 10), ms[n]
		}
	}' "$OUT/bench.txt"
} | tee "$OUT/summary.txt"
echo
echo "results in $OUT"
