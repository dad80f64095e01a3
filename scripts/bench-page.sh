#!/usr/bin/env bash
# bench-page.sh: page weight, server render time and browser load time of
# the HTML catalogue for a generated tree of N skills (docs/benchmarks.md,
# "HTML catalogue").
#
#   scripts/bench-page.sh 300 10000     # one run per size
#
# For each size it generates N one-file skills (three tags each), starts
# the server on 127.0.0.1 with the default catalogue_page_size and with
# one page holding everything, and prints:
#   - curl: bytes of / (plain and gzip), time to first byte of the first
#     request (the page is rendered) and the median of 5 later ones
#     (served from the snapshot's cache), and of a search (?q=, rendered
#     per request);
#   - Chromium (scripts/pageweight): wire and body bytes, time to the
#     last byte, DOMContentLoaded and load, median of 5 loads without cache.
# Requires go, curl and chromium. Every process it starts is stopped by pid.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${BENCH_OUT:-${TMPDIR:-/tmp}/skillserver-page-bench}
mkdir -p "$out"
go build -o "$out/skillserver" ./cmd/skillserver
port=18390

pid=
# Stop the server on any exit, a failed step included.
trap '[[ -n $pid ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true' EXIT

ttfb() { curl -s -o /dev/null -H 'Accept: text/html' -w '%{time_starttransfer}\n' "$@"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for n in "$@"; do
	tree="$out/tree-$n"
	if [[ ! -d $tree ]]; then
		mkdir -p "$tree"
		for ((i = 0; i < n; i++)); do
			name=$(printf 'skill-%05d' "$i")
			mkdir -p "$tree/$name"
			printf -- '---\nname: %s\ndescription: Generated skill %d does one thing well when asked to, for the catalogue benchmark.\nmetadata:\n  version: 1.0.%d\n  tags: bench, group-%d, area-%d\n---\n# %s\n\nInstructions.\n' \
				"$name" "$i" "$((i % 7))" "$((i % 10))" "$((i % 37))" "$name" >"$tree/$name/SKILL.md"
		done
	fi
	for size in 100 "$n"; do
		"$out/skillserver" serve --skills "$tree" --listen "127.0.0.1:$port" --catalogue-page-size "$size" --log-level error &
		pid=$!
		until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do
			kill -0 "$pid" 2>/dev/null || { echo "bench-page: the server exited before it was ready" >&2; exit 1; }
			sleep 0.2
		done
		u="http://127.0.0.1:$port/"
		first=$(ttfb "$u")
		later=$(for _ in 1 2 3 4 5; do ttfb "$u"; done | median)
		search=$(for _ in 1 2 3 4 5; do ttfb "${u}?q=group-3"; done | median)
		plain=$(curl -s -H 'Accept: text/html' "$u" | wc -c)
		gz=$(curl -s -H 'Accept: text/html' -H 'Accept-Encoding: gzip' "$u" | wc -c)
		gz=$(curl -s -H 'Accept: text/html' -H 'Accept-Encoding: gzip' "$u" | wc -c) # compressed from the second request on
		echo "== $n skills, catalogue_page_size $size"
		echo "curl: / $plain B, gzip $gz B; first byte: first request ${first}s, cached ${later}s; search ?q=group-3 ${search}s"
		go run -C scripts ./pageweight -n 5 "$u" "${u}ui/skills/skill-00001"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		pid=
	done
done
