# ctxaudit — see README.md. Two commands matter: `make run` and `make test`.

GO            ?= go
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

.PHONY: all build test run bench lint fmt vet clickhouse clickhouse-stop deps fuzz clean

all: lint build test

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ctxaudit

## deps: install what the tests and the dev server need (clickhouse-server from
## Debian; chDB from npm into CHDB_DIR).
deps:
	@bash scripts/install-clickhouse.sh
	@bash scripts/install-chdb.sh

## test: lint, then every test; integration tests use a real ClickHouse
## (CTXAUDIT_TEST_CLICKHOUSE, or one started per package from clickhouse-server)
## and run the same statements on chDB 26.7.
test: deps lint
	$(GO) test -tags '$(TEST_TAGS)' -count=1 -timeout $(TEST_TIMEOUT) ./...

## run: start the local ClickHouse, create the schema, load the bundled example
## sessions, then run the collector in the foreground (OTLP on 127.0.0.1:4317/4318).
run: deps build clickhouse
	./$(BIN) migrate --clickhouse '$(CTXAUDIT_CLICKHOUSE)'
	./$(BIN) ingest --clickhouse '$(CTXAUDIT_CLICKHOUSE)' --store-content all examples/sessions
	CTXAUDIT_CLICKHOUSE='$(CTXAUDIT_CLICKHOUSE)' CTXAUDIT_EXAMPLES='$(CURDIR)/examples/sessions' \
	  ./$(BIN) collector --config $(COLLECTOR_CONFIG)

bench:
	$(GO) test -tags '$(TEST_TAGS)' -run '^$$' -bench '$(BENCH)' -benchmem ./...

## fuzz: run each fuzz target for FUZZTIME.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

lint: fmt vet

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet -tags '$(TEST_TAGS)' ./...

## clickhouse: start the local development server in the background (idempotent).
clickhouse: deps build
	./$(BIN) dev clickhouse --detach --dir $(CLICKHOUSE_DIR) --port $(CLICKHOUSE_PORT) --http-port $(CLICKHOUSE_HTTP_PORT)

clickhouse-stop: build
	./$(BIN) dev clickhouse --stop --dir $(CLICKHOUSE_DIR)

clean:
	rm -rf bin
