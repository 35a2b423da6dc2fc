#!/usr/bin/env bash
# build-image.sh: toolgate's OCI image for each linux binary GoReleaser left
# in dist/ (make snapshot runs it), saved as dist/toolgate_VERSION_linux_ARCH.oci.tar
# and tagged localhost/toolgate:VERSION-ARCH in Podman's local store.
#
# The image is FROM scratch (packaging/image/Containerfile): nothing is pulled
# from a registry. The CA bundle comes from this machine's ca-certificates.
#
# Usage: scripts/build-image.sh [DIST]   (DIST defaults to ./dist)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=${1:-$root/dist}
podman=${PODMAN:-podman}
command -v "$podman" >/dev/null || { echo "build-image: podman is missing (apt-get install podman)" >&2; exit 1; }
ca=/etc/ssl/certs/ca-certificates.crt
[[ -f $ca ]] || { echo "build-image: $ca is missing (apt-get install ca-certificates)" >&2; exit 1; }
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$dist/metadata.json" | head -1)
[[ -n $version ]] || { echo "build-image: no version in $dist/metadata.json (run goreleaser first)" >&2; exit 1; }

built=0
for bin in "$dist"/toolgate_linux_*/toolgate; do
	[[ -x $bin ]] || continue
	dir=$(basename "$(dirname "$bin")") # toolgate_linux_amd64_v1, toolgate_linux_arm64_v8.0
	arch=${dir#toolgate_linux_}
	arch=${arch%%_*}
	ctx=$(mktemp -d)
	trap 'rm -rf "$ctx"' EXIT
	cp "$bin" "$ctx/toolgate"
	cp "$ca" "$ctx/ca-certificates.crt"
	cp "$root/packaging/image/toolgate.yaml" "$ctx/toolgate.yaml"
	mkdir "$ctx/state"
	tag="localhost/toolgate:$version-$arch"
	"$podman" build --quiet --platform "linux/$arch" --build-arg "TARGETARCH=$arch" \
		-f "$root/packaging/image/Containerfile" -t "$tag" "$ctx" >/dev/null
	out="$dist/toolgate_${version}_linux_${arch}.oci.tar"
	rm -f "$out"
	"$podman" save --quiet --format oci-archive -o "$out" "$tag"
	echo "build-image: $out ($tag)"
	rm -rf "$ctx"
	trap - EXIT
	built=$((built + 1))
done
((built > 0)) || { echo "build-image: no linux binary in $dist" >&2; exit 1; }
