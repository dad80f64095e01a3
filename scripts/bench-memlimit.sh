#!/usr/bin/env bash
# bench-memlimit.sh: the server on a benchmark tree inside a memory
# cgroup, as a Kubernetes memory limit runs it (docs/benchmarks.md, "With
# state_dir"). It builds bin/skillserver, starts it on 127.0.0.1 in a new
# cgroup limited to --limit-mib, times the cold start to /readyz from an
# empty state directory, runs wrk on the RFC index for 5 s, then restarts
# it over the same state directory; after each it prints VmHWM, the
# cgroup's peak usage, how often it hit the limit and its OOM kills. The
# page cache of the blobs the cold start writes counts against the limit,
# as it does in a pod. Every process it starts is stopped by its pid, and
# the cgroup is removed.
#
#   scripts/bench-memlimit.sh [--limit-mib 256] [--tree DIR]
#
# --tree defaults to the 10,000-skill tree scripts/bench-growth.sh keeps
# in $TMPDIR/skillserver-bench-growth/10000 (run it first). Needs root, a
# cgroup v1 memory controller or cgroup v2, curl and wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=256
tree="${TMPDIR:-/tmp}/skillserver-bench-growth/10000"
while [ $# -gt 0 ]; do
	case "$1" in
	--limit-mib) limit="$2"; shift 2 ;;
	--tree) tree="$2"; shift 2 ;;
	*) echo "usage: $0 [--limit-mib N] [--tree DIR]" >&2; exit 2 ;;
	esac
done
for tool in curl wrk; do
	command -v "$tool" >/dev/null || { echo "bench-memlimit: $tool is required" >&2; exit 1; }
done
[ -d "$tree/skills" ] || { echo "bench-memlimit: no tree at $tree (run scripts/bench-growth.sh --sizes 10000 first)" >&2; exit 1; }
make build >/dev/null
bin="$PWD/bin/skillserver"
if [ -d /sys/fs/cgroup/memory ]; then # v1
	cg=/sys/fs/cgroup/memory/skillserver-bench-$$
	mkdir "$cg"
	echo $((limit << 20)) >"$cg/memory.limit_in_bytes"
	peak() { cat "$cg/memory.max_usage_in_bytes"; }
	hits() { cat "$cg/memory.failcnt"; }
	ooms() { awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control"; }
	reset() { echo 0 >"$cg/memory.max_usage_in_bytes"; }
else # v2
	cg=/sys/fs/cgroup/skillserver-bench-$$
	mkdir "$cg"
	echo $((limit << 20)) >"$cg/memory.max"
	peak() { cat "$cg/memory.peak"; }
	hits() { awk '$1 == "max" { print $2 }' "$cg/memory.events"; }
	ooms() { awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events"; }
	reset() { :; }
fi
work="$(mktemp -d)"
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	rmdir "$cg" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
port=18190
agents=()
[ -d "$tree/agents" ] && agents=(--agents "$tree/agents")
run() {
	reset
	local start end
	start=$(date +%s%N)
	sh -c "echo \$\$ >'$cg/cgroup.procs'; exec '$bin' serve --skills '$tree/skills' ${agents[*]} --listen 127.0.0.1:$port --base-url http://127.0.0.1:$port --watch=false --state-dir '$work/state'" >"$work/log.$1" 2>&1 &
	pid=$!
	until curl -sf "127.0.0.1:$port/readyz" >/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "$1: the server exited (OOM kills: $(ooms))" >&2
			tail -3 "$work/log.$1" >&2
			exit 1
		fi
		sleep 0.05
	done
	end=$(date +%s%N)
	local rate
	rate=$(wrk -t1 -c32 -d5s "http://127.0.0.1:$port/.well-known/agent-skills/index.json" | awk '/Requests\/sec/ { print $2 }')
	echo "$1: ready in $(((end - start) / 1000000)) ms; VmHWM $(awk '/VmHWM/ { print $2 * 1024 }' "/proc/$pid/status") bytes; RFC index $rate req/s; cgroup peak $(peak) bytes, limit hit $(hits) times, OOM kills $(ooms)"
	kill "$pid"
	wait "$pid" || true
	pid=
}
echo "memory limit $limit MiB, tree $tree"
run cold
run restart
