# skillserver build, test and run targets. `make help` lists them.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
DATE    ?= $(shell git log -1 --format=%cI 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(DATE)
GO      ?= go
BIN     := bin/skillserver

# Container image (`make docker`; DOCKER=podman works too).
DOCKER     ?= docker
IMAGE      ?= skillserver
REVISION   ?= $(shell git rev-parse HEAD 2>/dev/null)
CREATED    ?= $(or $(DATE),$(shell date -u +%Y-%m-%dT%H:%M:%SZ))
IMAGE_ROOT := bin/image-root

.PHONY: help build run test test-short lint golden validate clean docker fuzz man

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build a static binary into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/skillserver

run: build ## serve the bundled example tree on :8080
	$(BIN) serve --skills testdata/skills --agents testdata/agents

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

test: lint ## lint, then every test, with the race detector and the real-client interop tests
	SKILLSERVER_INTEROP=1 $(GO) test -race -count=1 ./...

# Tests run on Linux; the binary must also build for these.
CROSS_GOOS := linux darwin windows

lint: ## gofmt, go vet, staticcheck, and a build for each of CROSS_GOOS
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@for os in $(CROSS_GOOS); do echo "GOOS=$$os go build ./..."; GOOS=$$os $(GO) build ./... || exit 1; done

test-short: ## unit tests only (no interop, no race detector)
	$(GO) test -short ./...

# Every Fuzz function in the repository, found by `go test -list`, each
# run for FUZZTIME; `make test` runs only their seed corpora.
FUZZTIME ?= 30s

fuzz: ## run every fuzz test for FUZZTIME (default 30s) each
	@set -e; for pkg in $$($(GO) list ./...); do \
		for fn in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$fn"; \
			$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

golden: ## regenerate golden files under testdata/golden
	UPDATE_GOLDEN=1 $(GO) test -count=1 ./...

man: ## man pages of every command, generated from the command tree, into bin/man
	MAN_DIR=$(CURDIR)/bin/man $(GO) test -count=1 -run '^TestManPages$$' ./cmd/skillserver/
	@ls bin/man

validate: build ## validate the bundled example tree
	$(BIN) validate --skills testdata/skills --agents testdata/agents

# The image is scratch plus what this builds: a linux binary and the empty
# /skills and /agents mount points (bin/image-root). BUILDAH_FORMAT=docker
# makes podman keep the HEALTHCHECK (the OCI format has none); docker
# ignores it.
docker: export GOOS := linux
docker: build ## build the container image IMAGE:VERSION and :latest (DOCKER=podman works)
	rm -rf $(IMAGE_ROOT)
	mkdir -p $(IMAGE_ROOT)/skills $(IMAGE_ROOT)/agents
	BUILDAH_FORMAT=docker $(DOCKER) build \
		--build-arg VERSION=$(VERSION) \
		--build-arg REVISION=$(REVISION) \
		--build-arg CREATED=$(CREATED) \
		-t $(IMAGE):$(VERSION) -t $(IMAGE):latest .

clean: ## remove build output
	rm -rf bin
