# Two commands do all the set-up: `make run` and `make test`.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
# Tests share two cores with PostgreSQL and Chromium; -p 2 keeps packages
# from starving each other.
TESTFLAGS ?= -count=1 -p 2 -timeout 30m

.PHONY: run run-deps build test deps check generate fmt chaos

## run: install PostgreSQL if missing, build and start the console on the embedded PostgreSQL with demo data
run: run-deps build
	./bin/countersign

run-deps:
	@.ci/install-deps run

build: generate
	$(GO) build -o bin/countersign ./cmd/countersign

## test: install what is missing, check formatting, vet and templ, run every test
test: deps check
	$(GO) test $(TESTFLAGS) ./...

deps:
	@.ci/install-deps

# A long fault campaign; override e.g. CHAOS_FLAGS='-duration 2h -seed 42 -instances 2'.
CHAOS_FLAGS ?= -duration 30m -instances 3

## chaos: randomized faults against 3 console processes, one PostgreSQL and the demo shop, with an invariant checker (README: Tests)
chaos: run-deps build
	$(GO) run ./cmd/chaos -bin bin/countersign -history .data/chaos $(CHAOS_FLAGS)

## check: gofmt, go vet, and generated templ code up to date
check:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@before=$$(find . -name '*_templ.go' -not -path './.data/*' -exec sha256sum {} + | sort); \
	  $(GO) tool templ generate >/dev/null 2>&1 || { $(GO) tool templ generate; exit 1; }; \
	  after=$$(find . -name '*_templ.go' -not -path './.data/*' -exec sha256sum {} + | sort); \
	  if [ "$$before" != "$$after" ]; then \
	    echo "generated *_templ.go files were stale: 'go tool templ generate' changed them; commit the result"; \
	    diff <(echo "$$before") <(echo "$$after"); exit 1; fi

generate:
	$(GO) tool templ generate

fmt:
	gofmt -w $$(git ls-files -co --exclude-standard '*.go')
