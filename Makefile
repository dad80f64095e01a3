# skillserver build, test and run targets. `make help` lists them.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
DATE    ?= $(shell git log -1 --format=%cI 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(DATE)
GO      ?= go
BIN     := bin/skillserver

# Container image (`make docker`, with podman: it builds a manifest list).
DOCKER     ?= podman
IMAGE      ?= skillserver
REVISION   ?= $(shell git rev-parse HEAD 2>/dev/null)
CREATED    ?= $(or $(DATE),$(shell date -u +%Y-%m-%dT%H:%M:%SZ))
IMAGE_ROOT := bin/image-root

.PHONY: help build run test test-short lint golden validate clean docker fuzz man soak

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build a static binary into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/skillserver

run: build ## serve the bundled example tree on :8080
	$(BIN) serve --skills testdata/skills --agents testdata/agents

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

test: lint ## lint, then every test, with the race detector and the real-client interop tests
	SKILLSERVER_INTEROP=1 $(GO) test -race -count=1 ./...

# The build tags that leave every optional bucket driver out
# (docs/operations.md, "Smaller builds"); lint vets that build too.
NO_DRIVERS := no_s3blob,no_gcsblob,no_azureblob

# Tests run on Linux; the binary must also build for these.
CROSS_GOOS := linux darwin windows

lint: ## gofmt, go vet, staticcheck, and a build for each of CROSS_GOOS
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags '$(NO_DRIVERS)' ./...
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

# The soak (docs/benchmarks.md, "Soak"): 3 minutes by default; pass flags
# in SOAK_FLAGS, e.g. make soak SOAK_FLAGS='--duration 30m --csv soak.csv'.
soak: ## serve a generated tree under verifying clients, load, edits and reloads for 3m (SOAK_FLAGS='--duration 30m')
	$(GO) run ./scripts/soak $(SOAK_FLAGS)

golden: ## regenerate golden files under testdata/golden
	UPDATE_GOLDEN=1 $(GO) test -count=1 ./...

man: ## man pages of every command, generated from the command tree, into bin/man
	MAN_DIR=$(CURDIR)/bin/man $(GO) test -count=1 -run '^TestManPages$$' ./cmd/skillserver/
	@ls bin/man

validate: build ## validate the bundled example tree
	$(BIN) validate --skills testdata/skills --agents testdata/agents

# The image is scratch plus what this builds: a linux binary per platform
# (bin/linux-ARCH/skillserver, cross-compiled: no emulation, the
# Dockerfile runs nothing) and the empty /skills and /agents mount points
# (bin/image-root). Each platform's image is tagged IMAGE:VERSION-ARCH;
# IMAGE:VERSION and IMAGE:latest are one manifest list of them all, which
# `podman manifest push --all IMAGE:VERSION docker://...` publishes.
# BUILDAH_FORMAT=docker keeps the HEALTHCHECK (the OCI format has none).
PLATFORMS ?= linux/amd64 linux/arm64
ARCHES    := $(patsubst linux/%,%,$(PLATFORMS))

docker: ## build IMAGE:VERSION and :latest for PLATFORMS as one manifest list (podman)
	rm -rf $(IMAGE_ROOT) bin/linux-*
	mkdir -p $(IMAGE_ROOT)/skills $(IMAGE_ROOT)/agents
	@set -e; for arch in $(ARCHES); do \
		echo "CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -o bin/linux-$$arch/skillserver"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/linux-$$arch/skillserver ./cmd/skillserver; \
	done
	@set -e; for tag in $(VERSION) latest; do \
		if $(DOCKER) manifest exists $(IMAGE):$$tag 2>/dev/null; then $(DOCKER) manifest rm $(IMAGE):$$tag >/dev/null; fi; \
		$(DOCKER) manifest create $(IMAGE):$$tag >/dev/null; \
	done
	@set -e; for arch in $(ARCHES); do \
		echo "$(DOCKER) build --platform linux/$$arch -t $(IMAGE):$(VERSION)-$$arch"; \
		BUILDAH_FORMAT=docker $(DOCKER) build --quiet --platform linux/$$arch \
			--build-arg VERSION=$(VERSION) \
			--build-arg REVISION=$(REVISION) \
			--build-arg CREATED=$(CREATED) \
			-t $(IMAGE):$(VERSION)-$$arch . >/dev/null; \
		for tag in $(VERSION) latest; do \
			$(DOCKER) manifest add $(IMAGE):$$tag containers-storage:$(IMAGE):$(VERSION)-$$arch >/dev/null; \
		done; \
	done
	$(DOCKER) manifest inspect $(IMAGE):$(VERSION)

clean: ## remove build output
	rm -rf bin
