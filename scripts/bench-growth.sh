#!/usr/bin/env bash
# bench-growth.sh: how the server's costs grow with the tree
# (docs/benchmarks.md, "How cost grows"). For each size it generates (or
# reuses) a tree of N skills (about 30% with resources) and N/10 agents,
# times sha256sum -P$(nproc) over its files, starts the server on it on
# 127.0.0.1 (watch on), and reports: cold start to ready, the scan's own
# time, RSS, the RFC index's size and its 200 rate against nginx serving
# the same bytes, one skill's update through the file watch, and a full
# rescan (SIGHUP). Every process it starts is stopped by its pid.
#
#   scripts/bench-growth.sh [--sizes 100,1000,10000,100000] [--duration 5s]
#                           [--trees DIR] [--resource-kib MIN,MAX] [--max-ready 20m]
#
# The trees are kept in --trees (default $TMPDIR/skillserver-bench-growth)
# for the next run: 100,000 skills are about 2 GB in 230,000 files.
# Requires go, nginx (/usr/sbin/nginx, or NGINX=path), wrk, sha256sum,
# find and xargs. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in go wrk sha256sum find xargs; do
	command -v "$tool" >/dev/null || { echo "bench-growth: $tool is required" >&2; exit 1; }
done
# scripts/ is its own module: build the command there, run it from here.
bin="$(mktemp -d)/bench"
go build -C scripts -o "$bin" ./bench
exec "$bin" growth "$@"
