# Two commands do all the set-up: `make run` and `make test`. `make help` lists
# every target from its `## target: description` line.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
# Tests share two cores with PostgreSQL and Chromium; -p 2 keeps packages
# from starving each other.
TESTFLAGS ?= -count=1 -p 2 -timeout 30m
# Packages whose tests race goroutines (or processes) against shared state run
# under the race detector; the rest run without it, which keeps `make test`
# within a quarter of an hour on two cores.
RACE_PKGS := countersign/internal/controlplane countersign/internal/confirmation countersign/internal/locale \
	countersign/internal/accounts countersign/store countersign/internal/adapter \
	countersign/internal/notify countersign/internal/demoshop countersign/internal/slackbot

.PHONY: help run run-deps build test test-short deps check lint generate fmt chaos bench image

## run: install PostgreSQL if missing, build and start the console on the embedded PostgreSQL with demo data (OIDC_DEMO=true: staff sign in through a test OpenID provider too)
run: run-deps build
	./bin/countersign

# run-deps installs what `make run` needs (PostgreSQL); run and test-short use it.
run-deps:
	@.ci/install-deps run

## build: generate templ code and build bin/countersign
build: generate
	$(GO) build -o bin/countersign ./cmd/countersign

## test: install what is missing, run check, then every test (the concurrent packages under -race); CI runs this
test: deps check
	$(GO) test $(TESTFLAGS) -race $(RACE_PKGS)
	$(GO) test $(TESTFLAGS) $$($(GO) list ./... | grep -v -x -F $(foreach p,$(RACE_PKGS),-e $(p)))

## test-short: the fast loop: go test -short, which skips browser and process-kill tests (never when CI=true)
test-short: run-deps
	$(GO) test -short $(TESTFLAGS) ./...

## deps: install PostgreSQL and Chromium when missing and fetch axe-core (as root, with apt and npm)
deps:
	@.ci/install-deps

# A long fault campaign; override e.g. CHAOS_FLAGS='-duration 2h -seed 42 -instances 2'.
CHAOS_FLAGS ?= -duration 30m -instances 3

## chaos: randomized faults against 3 console processes, one PostgreSQL and the demo shop, with an invariant checker (internal/chaos/README.md)
chaos: run-deps build
	$(GO) run ./cmd/chaos -bin bin/countersign -history .data/chaos $(CHAOS_FLAGS)

# Flags for cmd/bench, e.g. BENCH_FLAGS='-quick' or BENCH_FLAGS='-out bench.json'.
BENCH_FLAGS ?=

## bench: the benchmark suite (6–6½ minutes on idle cores): pgbench and bare-Echo baselines, then a console's writes, pages, confirmations, long polls and memory beside them (internal/bench/README.md)
bench: build
	@.ci/install-deps bench
	$(GO) run ./cmd/bench -bin bin/countersign $(BENCH_FLAGS)

# The image's tag for `make image`, e.g. IMAGE=registry.example.com/countersign:1.0.
IMAGE ?= localhost/countersign:latest

## image: build the console's container image with podman, without a registry (deploy/README.md; `podman build .` builds it from source)
image:
	@.ci/install-deps image
	deploy/image/build $(IMAGE)

## check: gofmt, go vet, the linters (make lint) and generated templ code up to date
check: lint
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@before=$$(find . -name '*_templ.go' -not -path './.data/*' -exec sha256sum {} + | sort); \
	  $(GO) tool templ generate >/dev/null 2>&1 || { $(GO) tool templ generate; exit 1; }; \
	  after=$$(find . -name '*_templ.go' -not -path './.data/*' -exec sha256sum {} + | sort); \
	  if [ "$$before" != "$$after" ]; then \
	    echo "generated *_templ.go files were stale: 'go tool templ generate' changed them; commit the result"; \
	    diff <(echo "$$before") <(echo "$$after"); exit 1; fi

# golangci-lint is pinned in its own module file, so its modules stay out of go.mod.
GOLANGCI_LINT := $(GO) tool -modfile=tools/golangci-lint.mod golangci-lint

## lint: golangci-lint with .golangci.yaml (staticcheck, errcheck, unused, unparam, misspell, depguard for the layers…)
lint:
	$(GOLANGCI_LINT) run ./...

## generate: regenerate the *_templ.go files from the .templ files
generate:
	$(GO) tool templ generate

## fmt: gofmt every Go file
fmt:
	gofmt -w $$(git ls-files -co --exclude-standard '*.go')

## help: list the targets with what each does
help:
	@grep -E '^## [a-z-]+: ' $(firstword $(MAKEFILE_LIST)) | sed -E 's/^## ([a-z-]+): /\1\t/' | expand -t 13
