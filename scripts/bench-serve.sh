#!/usr/bin/env bash
# bench-serve.sh: skillserver against nginx serving the same bytes
# (docs/benchmarks.md, "Serving"). It generates a tree (300 skills by
# default), starts the server on it on 127.0.0.1, mirrors its responses
# into a folder served by nginx (gzip_static for the gzip row), runs
# `wrk -t1 -c32` on both for each endpoint, and prints req/s and ratios.
# Every process it starts is stopped by its pid.
#
#   scripts/bench-serve.sh [--skills N] [--duration 5s] [--rounds 3] [--require 0.9] [--keep]
#
# Requires go, nginx (/usr/sbin/nginx, or NGINX=path) and wrk
# (apt-get install -y nginx wrk). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in go wrk; do
	command -v "$tool" >/dev/null || { echo "bench-serve: $tool is required (apt-get install -y $tool)" >&2; exit 1; }
done
# scripts/ is its own module: build the command there, run it from here.
bin="$(mktemp -d)/bench"
go build -C scripts -o "$bin" ./bench
exec "$bin" serve "$@"
