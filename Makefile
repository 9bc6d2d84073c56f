# The two commands a new user needs: `make run` and `make test`.
GO        ?= go
PKGS      ?= ./...
TEST_FLAGS ?= -race -count=1 -timeout 30m

# What `once version` prints, stamped by the linker (see buildinfo/): the
# service's tag (vX.Y.Z; the Go SDK's sdk/go/vX.Y.Z tags are not the
# binary's), the commit, and the build's date. Override any of them:
# make release VERSION=v0.2.0 DATE=2026-01-02T03:04:05Z
VERSION   ?= $(shell git describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -X github.com/oncehq/once/buildinfo.version=$(VERSION) -X github.com/oncehq/once/buildinfo.commit=$(COMMIT) -X github.com/oncehq/once/buildinfo.date=$(DATE)
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: run test test-patroni sdk-go-test ops-rules services build release release-check openapi config-doc openapi-check openapi-lint sdk sdk-ts-deps mocks fuzz vet fmt-check dupscan bench-drain bench-steady bench-fairness bench-storm bench-peers bench-http bench-soak bench-retention bench-work bench-push bench-fleet peers-bin

## run: the service on the embedded in-memory store; prints a token and a request to try
run:
	$(GO) run ./cmd/once serve

## test: every test, with PostgreSQL, Redis and RabbitMQ started (installed if missing)
test: services
	$(GO) vet $(PKGS)
	$(MAKE) ops-rules
	$(GO) test $(TEST_FLAGS) $(PKGS)
	$(MAKE) sdk-go-test

## test-patroni: the failover test under Patroni (etcd, three PostgreSQL nodes, HAProxy; both ways in, five failovers under load: a few minutes); make test runs the cluster's own test only
test-patroni: services
	ONCE_PATRONI_FAILOVER=1 $(GO) test $(TEST_FLAGS) -run TestPatroniFailoverKeepsExecutesOnce -v ./cmd/once/

## sdk-go-test: the Go SDK's own tests (sdk/go is a module of its own; sdk/gotest tests it against the server)
sdk-go-test:
	cd sdk/go && $(GO) vet ./... && $(GO) test $(TEST_FLAGS) ./...

## ops-rules: promtool checks the alert rules of deploy/prometheus and runs their unit tests (promtool from Debian's package: scripts/ops-tools.sh)
ops-rules:
	@promtool=$$(bash scripts/ops-tools.sh) && \
	$$promtool check rules deploy/prometheus/once-rules.yaml && \
	cd deploy/prometheus && $$promtool test rules once-rules.test.yaml

services:
	bash scripts/services.sh

## build: the service (bin/once) and the benchmarks (bin/once-bench, which runs bin/once)
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/once ./cmd/once
	$(GO) build -o bin/once-bench ./bench

## release: dist/once-VERSION-OS-ARCH for each of PLATFORMS (static, stripped, -trimpath) and dist/SHA256SUMS (docs/release.md)
release:
	rm -rf dist && mkdir -p dist
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; echo "build $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o dist/once-$(VERSION)-$$os-$$arch ./cmd/once; \
	done
	cd dist && if command -v sha256sum >/dev/null; then sha256sum once-*; else shasum -a 256 once-*; fi > SHA256SUMS
	@cat dist/SHA256SUMS

## release-check: make release, then check the binaries (platforms, checksums, the stamped version); CI runs it
release-check:
	bash scripts/release-check.sh

## openapi: regenerate the committed OpenAPI documents from the code
openapi:
	$(GO) run ./cmd/once openapi -o openapi/openapi.yaml
	$(GO) run ./cmd/once openapi --spec-version 3.0 -o openapi/openapi-3.0.yaml

## config-doc: regenerate the settings tables of docs/configuration.md from app/config_*.go (a test checks them)
config-doc:
	$(GO) run ./cmd/once config --update-doc docs/configuration.md

OAPI_CODEGEN = $(GO) run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2

## sdk: regenerate both SDKs from the committed spec (sdk/go, sdk/typescript)
sdk: sdk-ts-deps
	$(OAPI_CODEGEN) -config sdk/go/oapi-codegen.yaml openapi/openapi-3.0.yaml
	cd sdk/typescript && ./node_modules/.bin/openapi-typescript ../../openapi/openapi.yaml -o src/schema.ts

sdk-ts-deps:
	cd sdk/typescript && npm ci --no-audit --no-fund --silent

## openapi-check: fail if the committed documents or either SDK differ from the code, or the documents do not lint clean
openapi-check: sdk-ts-deps
	@tmp=$$(mktemp -d) && \
	$(GO) run ./cmd/once openapi -o $$tmp/openapi.yaml && \
	$(GO) run ./cmd/once openapi --spec-version 3.0 -o $$tmp/openapi-3.0.yaml && \
	diff -u openapi/openapi.yaml $$tmp/openapi.yaml && \
	diff -u openapi/openapi-3.0.yaml $$tmp/openapi-3.0.yaml && \
	sed 's|^output: .*|output: '$$tmp'/client.gen.go|' sdk/go/oapi-codegen.yaml > $$tmp/codegen.yaml && \
	$(OAPI_CODEGEN) -config $$tmp/codegen.yaml openapi/openapi-3.0.yaml && \
	diff -u sdk/go/client.gen.go $$tmp/client.gen.go && \
	(cd sdk/typescript && ./node_modules/.bin/openapi-typescript ../../openapi/openapi.yaml -o $$tmp/schema.ts >/dev/null) && \
	diff -u sdk/typescript/src/schema.ts $$tmp/schema.ts && \
	echo "openapi: committed documents and client match the code" || \
	{ echo "openapi: drift; run 'make openapi sdk' and commit openapi/ and sdk/" >&2; exit 1; }
	$(MAKE) openapi-lint

## openapi-lint: @redocly/cli (pinned in tools/openapi) on both documents; any warning fails
openapi-lint:
	cd tools/openapi && npm ci --no-audit --no-fund --silent && \
	./node_modules/.bin/redocly lint --config redocly.yaml ../../openapi/openapi.yaml ../../openapi/openapi-3.0.yaml

## mocks: regenerate the mockery mocks of the ports
mocks:
	$(GO) run github.com/vektra/mockery/v3@v3.9.1

## fuzz: run each fuzz target for a while (make test runs their seed corpus)
fuzz:
	$(GO) test -run=NONE -fuzz=FuzzCanonicalJSON -fuzztime=30s ./domain/idempotency/
	$(GO) test -run=NONE -fuzz=FuzzParseKey -fuzztime=30s ./domain/idempotency/
	$(GO) test -run=NONE -fuzz=FuzzNormalizePath -fuzztime=30s ./domain/idempotency/

vet:
	$(GO) vet $(PKGS)
	cd sdk/go && $(GO) vet ./...

## dupscan: the duplicate-code scan of the product code (tests and generated code aside), with the rows that pair two task types
dupscan:
	bash scripts/dupscan.sh --most 200

## fmt-check: fail if gofmt would change a tracked Go file
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:" >&2; echo "$$out" >&2; exit 1; fi
## bench-drain: a preloaded backlog drained by 1 and 3 Dispatcher processes to Redis and AMQP, beside the raw claim+mark limit (prints a table)
##   e.g. make bench-drain DRAIN_ARGS='--events 1000000 --queues redis --dispatchers 1 --clients ""'
bench-drain: services build
	bin/once-bench drain $(DRAIN_ARGS)

## bench-steady: commit-to-publish p50/p99/max at 2,000 events/s, producers in a process of their own, 1 and 3 Dispatchers (prints a table)
bench-steady: services build
	bin/once-bench steady $(STEADY_ARGS)

## bench-fairness: the quiet workspaces' commit-to-publish p50/p99 with 500,000 events pending in one workspace, beside the same run without them (prints a table)
bench-fairness: services build
	bin/once-bench fairness $(FAIRNESS_ARGS)

## bench-peers: once (one Dispatcher), River and the watermill-sql Forwarder drain the same backlog to Redis Streams, interleaved; prints the ratios
##   bench/peers is a module of its own, so the product does not depend on the peers; a quick run: make bench-peers PEERS_ARGS='--events 20000'
bench-peers: services build
	cd bench/peers && $(GO) run . --once ../../bin/once-bench $(PEERS_ARGS)

## bench-storm: retry storm, completed-key replays, broker outage, PostgreSQL restart against its targets (docs/benchmarks.md, "Under storms and faults"; prints a table)
##   a quick run: make bench-storm STORM_ARGS='--outage 30s'
bench-storm: services build
	bin/once-bench storm $(STORM_ARGS)

## bench-http: plain vs idempotent creates and replays over HTTP beside pgbench, at 1, 4 and 16 connections (prints a table)
##   a quick run: make bench-http HTTP_ARGS='--repetitions 1 --duration 2s'
bench-http: build
	bin/once-bench http $(HTTP_ARGS)

## bench-soak: 30 minutes of creates at 15 % of the API's measured capacity (about half the machine with delivery and jobs) with retention every 30 s, a row a minute and its steadiness checks (docs/benchmarks.md, "Steady for months?"; prints a table)
##   with a transaction left open: make bench-soak SOAK_ARGS='--open-snapshot 5m'; a quick run: SOAK_ARGS='--duration 3m --retention 1m'
bench-soak: services build
	bin/once-bench soak $(SOAK_ARGS)

## bench-work: one once work against once sim: jobs/s beside its limits, fairness, a platform's outage, a throttling shop (docs/benchmarks.md, "The work side"; prints a table)
##   a quick run: make bench-work WORK_ARGS='--reps 1 --outage-for 20s --throttled 80'; the issue's outage: WORK_ARGS='--scenarios outage --outage-for 10m'
##   throughput runs River beside once (bin/once-peers river-work); its profiles: WORK_ARGS='--scenarios throughput --profile-dir /tmp/work-profile'
bench-work: build peers-bin
	bin/once-bench work --river-peer bin/once-peers $(WORK_ARGS)

## peers-bin: bin/once-peers, bench/peers built (a module of its own: River and watermill-sql stay out of the product's)
peers-bin:
	cd bench/peers && $(GO) build -o ../../bin/once-peers .

## bench-push: how soon a client learns an operation ended: a signed webhook, ?wait= on a second serve, a read each second (the peer); then a receiver down (docs/benchmarks.md, "Push"; prints a table)
##   the issue's outage: make bench-push PUSH_ARGS='--scenarios push-outage --reps 1 --receiver-down 10m'
bench-push: build
	bin/once-bench work --scenarios push,push-outage $(PUSH_ARGS)

## bench-fleet: the work side with 1 and with 3 once work processes: a platform's whole bucket and a shop's, a platform's outage, a workspace of slow destinations beside a fast one (docs/benchmarks.md, "Fleet"; prints a table)
##   a quick run: make bench-fleet FLEET_ARGS='--reps 1 --platform-jobs 30 --throttled 20 --outage-for 20s --slow-jobs 5 --fast-jobs 100'; the issue's outage: FLEET_ARGS='--scenarios outage --outage-for 10m'
##   ordering across the fleet (workers killed -9): FLEET_ARGS='--scenarios ordering' (10,000 jobs over 200 keys; --ordering-jobs 1000 --ordering-keys 50 for a quick one)
bench-fleet: build
	bin/once-bench work --workers 1,3 --scenarios throttle-platform,throttle,outage,fairness-slow --shop-bucket 4:2 --throttled 60 $(FLEET_ARGS)

## bench-retention: WAL and time of removing 1M dispatched events (partition drop vs batched DELETE) and 1M idempotency records (prints a table)
bench-retention: build
	bin/once-bench retention $(RETENTION_ARGS)
