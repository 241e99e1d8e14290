# ctxaudit — see README.md. Two commands matter: `make run` and `make test`.

GO            ?= go
STATICCHECK_VERSION ?= v0.8.2
BIN           := bin/ctxaudit
PKG           := github.com/ctxaudit/ctxaudit
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT        ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS       := -X $(PKG)/internal/cli.Version=$(VERSION) -X $(PKG)/internal/cli.Commit=$(COMMIT)

# The local development ClickHouse (`make clickhouse`).
CLICKHOUSE_DIR       ?= .ctxaudit/clickhouse
CLICKHOUSE_PORT      ?= 9000
CLICKHOUSE_HTTP_PORT ?= 8123
CTXAUDIT_CLICKHOUSE  ?= clickhouse://default@127.0.0.1:$(CLICKHOUSE_PORT)/ctxaudit

# Debian installs clickhouse-server into /usr/sbin.
export PATH := $(PATH):/usr/sbin

# chDB, the second engine the tests run every statement on (ClickHouse 26.7
# in process; scripts/install-chdb.sh). Its Go binding is built with the chdb
# tag and loads the library named by CHDB_LIB_PATH when a test binary starts.
CHDB_DIR      ?= $(or $(CTXAUDIT_CHDB_DIR),/var/cache/ctxaudit/chdb)
export CTXAUDIT_CHDB_DIR := $(CHDB_DIR)
export CHDB_LIB_PATH     := $(CHDB_DIR)/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so
TEST_TAGS     ?= chdb

COLLECTOR_CONFIG ?= examples/collector.yaml

TEST_TIMEOUT  ?= 20m
BENCH         ?= .
FUZZTIME      ?= 30s
# How long the fuzzer may shrink each input it keeps. Go's default, 60 s,
# is spent on every input that finds new coverage; with the large seeds of
# the stored-records target a worker then ran no new input for most of a
# short FUZZTIME. A failing input is saved whether or not it was shrunk.
FUZZMINIMIZETIME ?= 2s

# `make install` copies the binary to $(PREFIX)/bin.
PREFIX        ?= /usr/local

.PHONY: all help build install test run bench bench-collector lint fmt vet staticcheck clickhouse clickhouse-stop deps clickhouse-server fuzz clean eval generate lab

## all: lint, build and test.
all: lint build test

## help: list the targets.
help:
	@awk '/^##   / { sub(/^##   /, ""); printf "  %-21s %s\n", "", $$0; next } \
	  sub(/^## /, "") { i = index($$0, ": "); printf "  make %-16s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }' $(MAKEFILE_LIST)

## build: build bin/ctxaudit.
build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ctxaudit

## install: build, then copy bin/ctxaudit to $(PREFIX)/bin (default /usr/local/bin),
##   so the commands in README.md work as written.
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/ctxaudit
	@echo "installed $(DESTDIR)$(PREFIX)/bin/ctxaudit"

## deps: install what the tests need: clickhouse-server and chromium (the HTML
##   report's browser test) from Debian, chDB from npm into CHDB_DIR. `make run`
##   installs only clickhouse-server.
deps: clickhouse-server
	@bash scripts/install-chromium.sh
	@bash scripts/install-chdb.sh

# clickhouse-server: install Debian's clickhouse-server when it is missing —
# all that `make run` needs of deps; chromium and chDB (about 540 MB) serve
# only the tests.
clickhouse-server:
	@bash scripts/install-clickhouse.sh

## test: lint, then every test; integration tests use a real ClickHouse
##   (CTXAUDIT_TEST_CLICKHOUSE, or one started per package from clickhouse-server)
##   and run the same statements on chDB 26.7.
test: deps lint
	$(GO) test -tags '$(TEST_TAGS)' -count=1 -timeout $(TEST_TIMEOUT) ./...

## run: start the local ClickHouse, create the schema, load the bundled example
##   sessions, then run the collector in the foreground (OTLP on 127.0.0.1:4317/4318),
##   with GOMEMLIMIT at the example's memory_limiter soft limit and GOGC=200 unless set.
run: clickhouse-server build clickhouse
	./$(BIN) migrate --clickhouse '$(CTXAUDIT_CLICKHOUSE)'
	./$(BIN) ingest --clickhouse '$(CTXAUDIT_CLICKHOUSE)' --store-content all examples/sessions
	CTXAUDIT_CLICKHOUSE='$(CTXAUDIT_CLICKHOUSE)' CTXAUDIT_EXAMPLES='$(CURDIR)/examples/sessions' \
	  GOMEMLIMIT=$${GOMEMLIMIT:-320MiB} GOGC=$${GOGC:-200} ./$(BIN) collector --config $(COLLECTOR_CONFIG)

## generate: regenerate what is rendered from checked-in sources: each collector
##   component's documentation.md, README status/telemetry tables, Go metadata
##   package (type, stability, TelemetryBuilder) and lifecycle tests from its
##   metadata.yaml; the MessagePack code of the records the processor stores (msgp).
generate:
	$(GO) run ./internal/componentmeta/cmd/componentdocs
	$(GO) generate ./schema ./collector/processor/ctxauditprocessor

## lab: install the pinned harnesses from npm (into LAB_CACHE), run every
##   lab scenario on the real harnesses against the scripted model servers,
##   re-record testdata/lab, check every verdict against its truth, write
##   docs/harnesses.md, and show how the recordings changed.
LAB_CACHE ?= .ctxaudit/lab/npm
lab:
	@bash scripts/install-lab-deps.sh
	$(GO) run ./internal/harnesslab/cmd/harnesslab -cache $(LAB_CACHE) -out testdata/lab -doc docs/harnesses.md
	@git diff --quiet -- docs/harnesses.md 2>/dev/null && echo "lab: verdicts unchanged (docs/harnesses.md)" || git diff -- docs/harnesses.md

## bench: run the benchmarks (BENCH=regexp).
bench:
	$(GO) test -tags '$(TEST_TAGS)' -run '^$$' -bench '$(BENCH)' -benchmem ./...

## bench-collector: build the distribution, run it as its own process with
##   COLLECTOR_CONFIG and with the otlp → batch → nop floor, drive each with
##   BENCH_SPANS spans from a separate load generator, and report spans/s, rows
##   per call, CPU and peak RSS (docs/performance.md). ClickHouse:
##   CTXAUDIT_BENCH_CLICKHOUSE, else a dev server started and stopped here.
##   BENCH_FLAGS=-outage adds a run with ClickHouse stopped (peak RSS vs limit);
##   BENCH_FLAGS=-rounds=5 measures both pipelines 5 times, alternating, and
##   reports the median round (single runs move with the machine);
##   BENCH_FLAGS='-set processors::ctxaudit::analyze_sessions=false' measures
##   a variant of COLLECTOR_CONFIG (collector --set, the floor unchanged);
##   BENCH_FLAGS='-rounds=4 -compare /path/to/other/ctxaudit' runs a second
##   build beside this one in every round and compares the two;
##   BENCH_FLAGS='-profile /tmp/prof' writes each collector's CPU and
##   allocation profiles there (go tool pprof bin/ctxaudit FILE);
##   BENCH_FLAGS=-halves sends every conversation in two halves, all first
##   halves first: the sessions the processor dropped go on (resumed);
##   BENCH_FLAGS=-rate=10000 paces every load at 10,000 spans/s and adds
##   the collector cores that rate takes (for sizing).
BENCH_SPANS ?= 200000
BENCH_FLAGS ?=
bench-collector: build
	$(GO) build -o bin/benchcollector ./internal/benchcollector/cmd/benchcollector
	./bin/benchcollector -bin $(BIN) -config $(COLLECTOR_CONFIG) -spans $(BENCH_SPANS) $(BENCH_FLAGS)

## fuzz: run each fuzz target for FUZZTIME; fails if any target finds a failing input.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) bash scripts/fuzz.sh

## lint: gofmt, go vet and staticcheck (fetched through the module proxy at a pinned version).
lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet -tags '$(TEST_TAGS)' ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags '$(TEST_TAGS)' ./...

## clickhouse: start the local development server in the background (idempotent).
clickhouse: clickhouse-server build
	./$(BIN) dev clickhouse --detach --dir $(CLICKHOUSE_DIR) --port $(CLICKHOUSE_PORT) --http-port $(CLICKHOUSE_HTTP_PORT)

## clickhouse-stop: stop the local development server.
clickhouse-stop: build
	./$(BIN) dev clickhouse --stop --dir $(CLICKHOUSE_DIR)

## clean: remove bin/.
clean:
	rm -rf bin

## eval: precision, recall and F1 of the absence detector per label and per
##   language, and its confusion matrix, on the labeled corpus (no ClickHouse).
eval:
	$(GO) run ./internal/absenceeval/cmd/absence-eval -corpus testdata/answers
