# addrwatch — the commands a newcomer needs. `make help` lists them.

GO      ?= go
BIN     := bin
DATA    ?= ./data

.PHONY: help build run test test-tools test-short soak fuzz bench vet clean screenshots release

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

build: ## build the server and the CLI into ./bin
	$(GO) build -o $(BIN)/addrwatchd ./cmd/addrwatchd
	$(GO) build -o $(BIN)/addrwatch ./cmd/addrwatch

# A release build: static (no cgo), no build paths (-trimpath), the
# commit stamped by the toolchain when built from a clone (-buildvcs=auto
# overrides a GOFLAGS=-buildvcs=false), the CPU levels named rather than
# taken from the environment. Nothing else (no time, no host) goes in, so
# one commit always gives the same bytes: TestReleaseIsReproducible.
DIST      ?= dist
PLATFORMS := linux/amd64 linux/arm64
RELEASE_FLAGS := -trimpath -buildvcs=auto
release: ## static binaries of the server and the CLI for $(PLATFORMS) into $(DIST), with SHA256SUMS; the same commit gives the same bytes
	rm -rf $(DIST) && mkdir -p $(DIST)
	@for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; \
	  for cmd in addrwatchd addrwatch; do \
	    echo "  $$cmd $$os/$$arch"; \
	    CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOAMD64=v1 GOARM64=v8.0 $(GO) build $(RELEASE_FLAGS) -o $(DIST)/$$cmd-$$os-$$arch ./cmd/$$cmd || exit 1; \
	  done; \
	done
	cd $(DIST) && sha256sum addrwatch* > SHA256SUMS && cat SHA256SUMS

run: build ## run one node with a demo account on ./data and print a curl to try
	$(BIN)/addrwatchd --demo --data $(DATA)

vet: ## static checks: go vet, staticcheck (pinned in go.mod's tool directive), and go.mod and go.sum as go mod tidy leaves them
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy (the diff above is what it changes)"; exit 1; }

# go test runs packages in the order they are named, -p at a time
# (GOMAXPROCS): the longest, system_test (about six minutes of the ten),
# is named first so it starts at once instead of after the others.
LONG_TESTS := ./system_test ./cluster ./bench ./httpd ./deploy
test: vet test-tools ## every test: unit, fuzz seeds, end-to-end over loopback HTTP, restart and crash, MCP conformance
	$(GO) test -race -count=1 -parallel 4 -timeout 15m $(LONG_TESTS) ./...

INSPECTOR := system_test/testdata/mcp-inspector
AXE := system_test/testdata/axe-core
test-tools: ## install the test tools beside Go: Chromium, Node.js and npm when missing (scripts/test-deps.sh), then the MCP inspector and axe-core (npm ci, pinned in $(INSPECTOR) and $(AXE))
	@./scripts/test-deps.sh
	@[ -x $(INSPECTOR)/node_modules/.bin/mcp-inspector ] || npm ci --prefix $(INSPECTOR) --no-audit --no-fund --loglevel=error
	@[ -f $(AXE)/node_modules/axe-core/axe.min.js ] || npm ci --prefix $(AXE) --no-audit --no-fund --loglevel=error

test-short: ## the unit tests only (no server processes)
	$(GO) test -short -count=1 ./...

SOAK_SECONDS ?= 300
soak: ## the fault test (partitions, kills, leadership transfers under load) on the WAL for SOAK_SECONDS (default 300), then on bolt for two thirds of that
	ADDRWATCH_FAULT_SECONDS=$(SOAK_SECONDS) $(GO) test ./system_test -run TestFaultLinearizable -count=1 -v -timeout 60m

FUZZTIME ?= 30s
fuzz: ## run every fuzz target for FUZZTIME each
	$(GO) test ./chain -run '^$$' -fuzz FuzzValidateBitcoinAddress -fuzztime $(FUZZTIME)
	$(GO) test ./chain -run '^$$' -fuzz FuzzAltcoinValidate -fuzztime $(FUZZTIME)
	$(GO) test ./actors -run '^$$' -fuzz FuzzSheetOperations -fuzztime $(FUZZTIME)
	$(GO) test ./persistence -run '^$$' -fuzz FuzzDecodeCommands -fuzztime $(FUZZTIME)
	$(GO) test ./persistence -run '^$$' -fuzz FuzzReadSnapshot -fuzztime $(FUZZTIME)
	$(GO) test ./persistence -run '^$$' -fuzz FuzzEntrySum -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzDecodeBody -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzParseBearer -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzFramedRequest -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzParseLabelFile -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzLabelImport -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzMCPDirectCall -fuzztime $(FUZZTIME)
	$(GO) test ./mcpserver -run '^$$' -fuzz FuzzToolArguments -fuzztime $(FUZZTIME)
	$(GO) test ./notify/send -run '^$$' -fuzz FuzzVerifySignatureHeader -fuzztime $(FUZZTIME)
	$(GO) test ./notify/egress -run '^$$' -fuzz '^FuzzParseTarget$$' -fuzztime $(FUZZTIME)
	$(GO) test ./notify/egress -run '^$$' -fuzz '^FuzzClassOfForms$$' -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz '^FuzzChannelCreateRequest$$' -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz '^FuzzFeedCursor$$' -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz '^FuzzRoutingAccount$$' -fuzztime $(FUZZTIME)
	$(GO) test ./actors -run '^$$' -fuzz '^FuzzAppendString$$' -fuzztime $(FUZZTIME)
	$(GO) test ./actors -run '^$$' -fuzz '^FuzzJSONString$$' -fuzztime $(FUZZTIME)
	$(GO) test ./chain/electrum -run '^$$' -fuzz '^FuzzReadAndDecode$$' -fuzztime $(FUZZTIME)

screenshots: ## take the README's pictures of the site again (docs/site-*.png), with headless Chromium (the notification pages on a btcd regtest node)
	ADDRWATCH_TOUR_DIR=$(CURDIR)/docs $(GO) test ./system_test -run '^(TestSiteTourInABrowser|TestSiteNotificationsInABrowser)$$' -count=1

bench: ## load-test one local node with bench/ (auth-reads, mcp, reads, sheet-put, site, baseline, then read-ratios against a bare fasthttp server), watch for three blocks on a btcd regtest node of its own, notify for three blocks and a small burst of webhooks (see bench/README.md), then the rule benchmarks
	@set -e; $(GO) build -o $(BIN)/addrwatchd ./cmd/addrwatchd; dir=$$(mktemp -d); set -- $$($(GO) run ./bench free-ports 3); \
	$(BIN)/addrwatchd --limits off --data "$$dir" --http "$$1" --admin "$$2" --raft "$$3" >"$$dir/addrwatchd.log" 2>&1 & pid=$$!; \
	trap 'st=$$?; kill $$pid 2>/dev/null || true; wait $$pid 2>/dev/null || true; [ $$st -eq 0 ] || tail -n 20 "$$dir/addrwatchd.log"; rm -rf "$$dir"' EXIT; \
	echo "addrwatchd --limits off on http://$$1 (admin http://$$2), data in $$dir"; \
	$(GO) run ./bench --targets "http://$$1" --admin "http://$$2" --data "$$dir" --duration 5s auth-reads mcp reads sheet-put site baseline; \
	$(GO) run ./bench --targets "http://$$1" --admin "http://$$2" --data "$$dir" -c 64 --duration 5s --rounds 3 read-ratios
	$(GO) run ./bench --server $(BIN)/addrwatchd --blocks 3 watch
	$(GO) run ./bench --server $(BIN)/addrwatchd --blocks 3 --burst-accounts 12 --burst-addresses 20 notify
	$(GO) test ./actors ./persistence -run '^$$' -bench . -benchmem -benchtime 300ms

.PHONY: cluster cluster-clean
cluster: ## run three local nodes over mutual TLS on ./cluster-data in the foreground, with a demo account; Ctrl-C stops them
	@MAKE='$(MAKE)' GO='$(GO)' ./scripts/cluster.sh

cluster-clean: ## remove ./cluster-data
	rm -rf ./cluster-data

clean: ## remove build output (not ./data)
	rm -rf $(BIN) $(DIST)

# The container image (deploy/container/Containerfile): FROM scratch, so
# the static binaries are built here with the host's Go and copied in, and
# podman pulls nothing. PODMAN may carry podman's global options (the test
# gives it a storage root of its own); --isolation=chroot needs no runtime
# for a build that runs no command in the image.
.PHONY: image
IMAGE  ?= localhost/addrwatch:dev
PODMAN ?= podman
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
image: ## build the container image $(IMAGE) with podman (FROM scratch: the static server and CLI, CA certificates, a data dir volume; user 65532)
	@[ -f $(CA_BUNDLE) ] || { echo "image: no CA bundle at $(CA_BUNDLE) (Debian: apt-get install ca-certificates)"; exit 1; }
	rm -rf $(BIN)/image && install -d -m 0755 $(BIN)/image/rootfs/etc/ssl/certs $(BIN)/image/rootfs/var/lib
	install -d -m 0700 $(BIN)/image/data/addrwatch
	install -m 0644 $(CA_BUNDLE) $(BIN)/image/rootfs/etc/ssl/certs/ca-certificates.crt
	CGO_ENABLED=0 $(GO) build $(RELEASE_FLAGS) -o $(BIN)/image/addrwatchd ./cmd/addrwatchd
	CGO_ENABLED=0 $(GO) build $(RELEASE_FLAGS) -o $(BIN)/image/addrwatch ./cmd/addrwatch
	$(PODMAN) build --isolation=chroot --file deploy/container/Containerfile --tag $(IMAGE) $(BIN)/image
