# shardjob — developer commands. `make help` lists them.
SHELL := /bin/bash
GO ?= go
PKGS := ./...
BIN := bin
# Bounded fuzzing inside `make test` (CI); raise locally: make fuzz FUZZTIME=5m
FUZZTIME ?= 10s
TEST_TIMEOUT ?= 20m

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_/-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-12s %s\n", $$1, $$2}'

.PHONY: build
build: ## build the admin, executor and shardjobctl (CLI) binaries into bin/
	$(GO) build -o $(BIN)/shardjob-admin ./admin/cmd/shardjob-admin
	$(GO) build -o $(BIN)/shardjob-executor ./executor/cmd/shardjob-executor
	$(GO) build -o $(BIN)/shardjobctl ./admin/cmd/shardjobctl

.PHONY: run
# `go run` compiles silently; the first build (modules, SQLite driver) takes
# minutes, so run builds with -v (each package as it compiles) first.
run: ## standalone mode: admin + SQLite + in-process coordinator + demo executor on http://127.0.0.1:8080
	@echo "shardjob: building the admin (the first build downloads modules and compiles for a few minutes; packages are listed as they compile)"
	$(GO) build -v -o $(BIN)/shardjob-admin ./admin/cmd/shardjob-admin
	$(BIN)/shardjob-admin standalone --data-dir data --http-addr 127.0.0.1:8080 $(ARGS)

.PHONY: screenshots
screenshots: ## full-page screenshots of every console page, 1440 and 1024 px, light and dark, into ./screenshots
	@bash deploy/dev/ensure-deps.sh
	SHARDJOB_SCREENSHOTS=$(CURDIR)/screenshots $(GO) test -count=1 -run '^TestScreenshots$$' -timeout 15m -v ./web/ | grep -E '^(---|ok|FAIL|PASS)|screenshots in'

.PHONY: deps
deps: ## install missing test services (Debian packages: mariadb-server, postgresql, zookeeper, chromium, slapd, ldap-utils) and start a stopped PostgreSQL
	@bash deploy/dev/ensure-deps.sh

# golangci-lint, pinned; built once into bin/ (from the Go module proxy) and
# reused, so that a second `make lint` only pays for the analysis (cached too).
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

$(GOLANGCI_LINT):
	GOBIN=$(abspath $(dir $@)) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## gofmt, go vet, go.mod/go.sum tidy, golangci-lint (.golangci.yml)
	@out=$$(gofmt -l admin deploy executor sdk web sql); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	$(GOLANGCI_LINT) run $(PKGS)

# Packages that start real admin/executor processes, browsers and private
# servers: run one at a time after the others, so that a 2-core machine is not
# so overloaded that heartbeats miss their deadlines.
PROCESS_PKGS := ./admin/chaos ./admin/e2e ./executor/chaos ./executor/e2e ./web

.PHONY: test
test: deps lint ## the whole suite with -race against real MariaDB, ZooKeeper and Chromium, then short fuzzing
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $$($(GO) list ./... | grep -v -E '/(admin/chaos|admin/e2e|executor/chaos|executor/e2e|web)$$')
	$(GO) test -race -count=1 -p 1 -timeout $(TEST_TIMEOUT) $(PROCESS_PKGS)
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME)

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (deploy/dev/fuzz.sh)
	@GO=$(GO) FUZZTIME=$(FUZZTIME) bash deploy/dev/fuzz.sh

.PHONY: bench
bench: deps ## run the benchmarks and print a table of figures (also written to bench.md)
	@set -o pipefail; $(GO) test -run='^$$' -bench=. -benchmem -count=1 -timeout 60m $(PKGS) | tee bench.out
	@$(GO) run ./admin/internal/benchtable < bench.out | tee bench.md
	@echo "copy bench.md into docs/performance.md to record it"

.PHONY: bench-herd
bench-herd: deps ## only the end-to-end herd benchmark (admin/e2e HerdE2E: real admin + 2 executors, 10k/100k jobs due at once), once
	$(GO) test -run='^$$' -bench=HerdE2E -benchtime=1x -count=1 -timeout 30m ./admin/e2e/

# BENCH_SCALE_JOBS jobs (default 1,000,000; 10000000 for 10 M) of the fleet's
# mix fired for BENCH_SCALE_DURATION (default 5m, at least 2m); bench-scale-api
# adds BENCH_SCALE_RUNS runs of the last day (default 1,000,000) over
# BENCH_SCALE_APPS apps (default 20).
BENCH_SCALE_JOBS ?= 1000000
BENCH_SCALE_DURATION ?= 5m
BENCH_SCALE_RUNS ?= 1000000
BENCH_SCALE_APPS ?= 20

.PHONY: bench-scale
bench-scale: deps ## a million jobs (BENCH_SCALE_JOBS) fired for BENCH_SCALE_DURATION by a real admin + 2 executors on a private MariaDB; prints the table of docs/performance.md
	BENCH_SCALE_JOBS=$(BENCH_SCALE_JOBS) BENCH_SCALE_DURATION=$(BENCH_SCALE_DURATION) $(GO) test -run='^$$' -bench=ScaleE2E -benchtime=1x -count=1 -timeout 120m ./admin/e2e/

.PHONY: bench-scale-api
bench-scale-api: deps ## the operator API's lists timed at a million jobs (BENCH_SCALE_JOBS) and runs (BENCH_SCALE_RUNS) through a real admin on a private MariaDB; prints the table of docs/performance.md
	BENCH_SCALE_JOBS=$(BENCH_SCALE_JOBS) BENCH_SCALE_RUNS=$(BENCH_SCALE_RUNS) BENCH_SCALE_APPS=$(BENCH_SCALE_APPS) $(GO) test -run='^$$' -bench=ScaleAPI -benchtime=1x -count=1 -timeout 120m ./admin/e2e/

.PHONY: clean
clean: ## remove build outputs (keeps data/)
	rm -rf $(BIN) bench.out bench.md

# The long forms of the chaos tests (admin/chaos: HA scheduling; executor/chaos:
# record-level exactly-once, and plain-handler duplicates by cause through a
# restart under the same instance id, a frozen admin and a frozen executor);
# the short forms run in `make test`.
# Knobs: make chaos CHAOS_JOBS=2000 CHAOS_ROUNDS=3 CHAOS_FLAGS=-race
CHAOS_JOBS ?= 1000
CHAOS_ROUNDS ?= 2
CHAOS_FLAGS ?=

.PHONY: chaos
chaos: deps ## long failure tests: HA (3 admins, CHAOS_JOBS jobs, CHAOS_ROUNDS rounds) and records (200,000 records exactly once), plain-handler duplicates by cause (3 rounds), kill -9/SIGSTOP/restarts
	SHARDJOB_CHAOS=long SHARDJOB_CHAOS_JOBS=$(CHAOS_JOBS) SHARDJOB_CHAOS_ROUNDS=$(CHAOS_ROUNDS) \
	  $(GO) test $(CHAOS_FLAGS) -count=1 -v -timeout 60m -run '^TestChaos' ./admin/chaos/
	SHARDJOB_CHAOS=long $(GO) test $(CHAOS_FLAGS) -count=1 -v -timeout 60m -run '^TestChaos' ./executor/chaos/
