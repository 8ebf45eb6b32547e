# addrwatch — the commands a newcomer needs. `make help` lists them.

GO      ?= go
BIN     := bin
DATA    ?= ./data

.PHONY: help build run test test-short fuzz bench vet clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

build: ## build the server and the CLI into ./bin
	$(GO) build -o $(BIN)/addrwatchd ./cmd/addrwatchd
	$(GO) build -o $(BIN)/addrwatch ./cmd/addrwatch

run: build ## run one node with a demo account on ./data and print a curl to try
	$(BIN)/addrwatchd --demo --data $(DATA)

vet: ## static checks
	$(GO) vet ./...

test: vet ## every test: unit, fuzz seeds, end-to-end over loopback HTTP, restart and crash
	$(GO) test -race -count=1 -timeout 15m ./...

test-short: ## the unit tests only (no server processes)
	$(GO) test -short -count=1 ./...

FUZZTIME ?= 30s
fuzz: ## run every fuzz target for FUZZTIME each
	$(GO) test ./chain -run '^$$' -fuzz FuzzValidateBitcoinAddress -fuzztime $(FUZZTIME)
	$(GO) test ./chain -run '^$$' -fuzz FuzzAltcoinValidate -fuzztime $(FUZZTIME)
	$(GO) test ./actors -run '^$$' -fuzz FuzzSheetOperations -fuzztime $(FUZZTIME)
	$(GO) test ./persistence -run '^$$' -fuzz FuzzDecodeCommands -fuzztime $(FUZZTIME)
	$(GO) test ./persistence -run '^$$' -fuzz FuzzReadSnapshot -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzDecodeBody -fuzztime $(FUZZTIME)
	$(GO) test ./httpd -run '^$$' -fuzz FuzzParseBearer -fuzztime $(FUZZTIME)

bench: ## loopback HTTP benchmarks of the hot read and the durable write, then the rule benchmarks
	$(GO) test ./system_test -run '^$$' -bench . -benchtime 5s
	$(GO) test ./actors ./persistence -run '^$$' -bench . -benchmem

clean: ## remove build output (not ./data)
	rm -rf $(BIN)
