// Package packaging_test checks what `make snapshot` ships: GoReleaser's
// archives, checksums and Debian package, built from the real
// .goreleaser.yaml; the OCI image, started with Podman; and the Kubernetes
// manifests of examples/kubernetes, read into the API's own types.
//
// The release build takes minutes: it is skipped with -short. A tool that is
// missing (GoReleaser's build, dpkg-deb, systemd-analyze, podman) skips its
// part outside CI and fails it under CI=true, where scripts/ensure-tools.sh
// has installed it.
package packaging_test
