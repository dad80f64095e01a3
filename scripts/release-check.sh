#!/usr/bin/env bash
# release-check: shows that `make dist` is reproducible. It checks out the
# commit at HEAD twice, into folders of different names, runs `make dist`
# in each (the second with a Go build cache of its own, so every package
# is compiled again), and compares the two SHA256SUMS: the archives and
# SBOMs must be the same bytes. Only committed files count.
#
#   scripts/release-check.sh                 # every platform of make dist
#   RELEASE_PLATFORMS=linux/amd64 scripts/release-check.sh
#
# With podman on PATH (or DOCKER=...), it also runs `make docker` in both
# checkouts, under two image names, and compares each platform's image ID
# (the digest of its config, which names every layer) and the manifest
# list; the images are removed after. RELEASE_CHECK_IMAGE=0 skips that.
#
# RELEASE_CHECK_CACHE=shared builds both with the usual build cache
# (faster; then the compiler's own output is not compared).
# RELEASE_CHECK_KEEP=DIR keeps the two checkouts in DIR.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commit=$(git -C "$repo" rev-parse HEAD)
if [[ -n ${RELEASE_CHECK_KEEP:-} ]]; then
	work=$RELEASE_CHECK_KEEP
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/release-check.XXXXXX")
	trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
fi

checkout() {
	git clone -q --no-checkout "$repo" "$1"
	git -C "$1" checkout -q --detach "$commit"
}
checkout "$work/first"
checkout "$work/second-elsewhere"
version=${VERSION:-$(make -s -C "$work/first" version)}
echo "release-check: $version at $commit"

start=$SECONDS
make -C "$work/first" dist VERSION="$version" >"$work/first.log" 2>&1 || { tail -n 50 "$work/first.log"; exit 1; }
echo "release-check: first build: $((SECONDS - start)) s"
cache=()
if [[ ${RELEASE_CHECK_CACHE:-} != shared ]]; then
	cache=(GOCACHE="$work/gocache")
fi
start=$SECONDS
env "${cache[@]}" make -C "$work/second-elsewhere" dist VERSION="$version" >"$work/second.log" 2>&1 || { tail -n 50 "$work/second.log"; exit 1; }
echo "release-check: second build: $((SECONDS - start)) s"

if ! diff -u "$work/first/dist/SHA256SUMS" "$work/second-elsewhere/dist/SHA256SUMS"; then
	echo "release-check: the two builds differ" >&2
	exit 1
fi
cat "$work/first/dist/SHA256SUMS"
echo "release-check: the two builds are the same bytes"

docker=${DOCKER:-podman}
if [[ ${RELEASE_CHECK_IMAGE:-1} == 0 ]] || ! command -v "${docker%% *}" >/dev/null; then
	echo "release-check: images not compared (no $docker, or RELEASE_CHECK_IMAGE=0)"
	exit 0
fi
images=()
remove_images() {
	for ref in "${images[@]}"; do
		$docker manifest rm "$ref" >/dev/null 2>&1 || $docker rmi -f "$ref" >/dev/null 2>&1 || true
	done
}
trap 'remove_images; chmod -R u+w "$work" 2>/dev/null; [[ -n ${RELEASE_CHECK_KEEP:-} ]] || rm -rf "$work"' EXIT
ids=()
for dir in first second-elsewhere; do
	name=release-check-$dir-$$
	images+=("localhost/$name:$version" "localhost/$name:latest")
	for arch in amd64 arm64; do images+=("localhost/$name:$version-$arch"); done
	env "${cache[@]}" make -C "$work/$dir" docker IMAGE="$name" VERSION="$version" DOCKER="$docker" >"$work/$dir-image.log" 2>&1 \
		|| { tail -n 50 "$work/$dir-image.log"; exit 1; }
	id=""
	for arch in amd64 arm64; do id+="$arch $($docker image inspect --format '{{.Id}}' "localhost/$name:$version-$arch") "; done
	id+="list $($docker manifest inspect "localhost/$name:$version" | sha256sum | cut -d' ' -f1)"
	ids+=("$id")
done
if [[ ${ids[0]} != "${ids[1]}" ]]; then
	printf 'release-check: the two images differ:\n  %s\n  %s\n' "${ids[0]}" "${ids[1]}" >&2
	exit 1
fi
echo "release-check: the two images are the same: ${ids[0]}"
