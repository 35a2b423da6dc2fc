# make test: installs or starts what the tests need, then lint (gofmt, go mod
# tidy, staticcheck), vet and every test with the race detector.
#   - scripts/ensure-tools.sh installs what is missing (Chromium for the
#     dashboard test; as root on Debian, via apt-get; the reference MCP
#     servers and GitHub's OpenAPI description from npm into .cache/npm,
#     scripts/install-mcp-servers.sh);
#   - scripts/with-postgres.sh starts a throwaway PostgreSQL 15 on 127.0.0.1,
#     exports TOOLGATE_TEST_POSTGRES for the tests, and stops it afterwards.
GO ?= go
PKGS ?= ./...

.PHONY: test vet lint unit deps build demo bench fmt snapshot

test: deps lint vet unit

# lint: gofmt, a tidy go.mod, and staticcheck (fetched through the Go module
# proxy at a pinned version): each fails the build on any finding.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt -l finds unformatted files:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) ./...

deps:
	@bash scripts/ensure-tools.sh

vet:
	$(GO) vet $(PKGS)

unit:
	GO=$(GO) bash scripts/with-postgres.sh bash scripts/test.sh

build:
	$(GO) build -o bin/toolgate ./cmd/toolgate

demo:
	$(GO) run ./cmd/toolgate demo

fmt:
	gofmt -w $$(git ls-files '*.go')

# make bench: every figure of BENCHMARKS.md, regenerated (about 4 minutes).
bench:
	GO=$(GO) bash scripts/with-postgres.sh $(GO) run ./cmd/toolgate-bench report

# make snapshot: a local release into dist/, nothing published: archives for
# linux and darwin (amd64, arm64) with checksums.txt, the .deb packages, and
# the OCI images as archives (scripts/build-image.sh, with Podman).
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.15.1
snapshot:
	TOOLGATE_COMMIT=$$(git rev-parse HEAD) $(GO) run $(GORELEASER) release --snapshot --clean
	bash scripts/build-image.sh dist
