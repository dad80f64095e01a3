# skillserver build, test and run targets. `make help` lists them.

# The version every build reports (`skillserver version`, /api/v1/info,
# the image tag): the tag at HEAD (vX.Y.Z) for a release; else the
# VERSION file, the release being prepared, with -dev-COMMIT; either with
# -dirty when tracked files have uncommitted changes. `make version`
# prints it; `make release VERSION=vX.Y.Z` sets it.
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
DATE    ?= $(shell git log -1 --format=%cI 2>/dev/null)
# The commit's time, in seconds: the time of every release archive entry
# and of the image's layers and config.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
GIT_TAG := $(shell git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null)
DIRTY   := $(if $(filter %-dirty,$(shell git describe --always --dirty 2>/dev/null)),-dirty)
DEFAULT_VERSION := $(or $(GIT_TAG),$(shell cat VERSION 2>/dev/null)-dev$(if $(COMMIT),-$(COMMIT)))$(DIRTY)
VERSION ?= $(DEFAULT_VERSION)
# -buildid= and -trimpath (below): two builds of one commit are the same bytes.
LDFLAGS := -s -w -buildid= -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(DATE)
GO      ?= go
BIN     := bin/skillserver
# The build tags that leave every optional bucket driver out
# (docs/operations.md, "Smaller builds"). bin/skillserver is built with
# them, so no process pays for the drivers; bin/skillserver-export, the
# full build, has them all, and `skillserver export` runs it for a bucket
# URL (s3://, gs://, azblob://) when it is in the same folder.
NO_DRIVERS := no_s3blob,no_gcsblob,no_azureblob
# build_pair GOOS GOARCH DIR [.exe]: both binaries, static, into DIR.
BUILD_PAIR = build_pair() { \
	echo "CGO_ENABLED=0 GOOS=$$1 GOARCH=$$2 $(GO) build -tags $(NO_DRIVERS) -o $$3/skillserver$$4, and without -tags -o $$3/skillserver-export$$4"; \
	CGO_ENABLED=0 GOOS=$$1 GOARCH=$$2 $(GO) build -trimpath -tags '$(NO_DRIVERS)' -ldflags '$(LDFLAGS)' -o $$3/skillserver$$4 ./cmd/skillserver && \
	CGO_ENABLED=0 GOOS=$$1 GOARCH=$$2 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$3/skillserver-export$$4 ./cmd/skillserver; }
# The Go tools the targets run (staticcheck, cyclonedx-gomod), pinned in
# tools/go.mod, apart from go.mod: their requirements would raise modules
# the binary links. `go tool` builds each once into the build cache.
TOOL := $(GO) tool -modfile=tools/go.mod

# Container image (`make docker`, with podman: it builds a manifest list).
DOCKER     ?= podman
IMAGE      ?= skillserver
REVISION   ?= $(shell git rev-parse HEAD 2>/dev/null)
CREATED    ?= $(or $(DATE),$(shell date -u +%Y-%m-%dT%H:%M:%SZ))
IMAGE_ROOT := bin/image-root
# scripts/release: the archives and sums of make dist, and make docker's
# image rewrite. Built every time (FORCE); go build skips what is current.
RELEASE_TOOL := bin/release-tool

.PHONY: help build run test test-short lint golden validate clean docker image-binaries dist release version fuzz man soak

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/skillserver (no bucket drivers) and bin/skillserver-export (all of them), static
	@$(BUILD_PAIR); build_pair "$$($(GO) env GOOS)" "$$($(GO) env GOARCH)" bin "$$($(GO) env GOEXE)"

version: ## print the version a build of this tree reports
	@echo $(VERSION)

run: build ## serve the bundled example tree on :8080
	$(BIN) serve --skills testdata/skills --agents testdata/agents

# scripts/ is a module of its own (benchmarks, soak, release): what only
# it needs stays out of the product's go.mod. Its tests run here too.
SCRIPTS := scripts

# The build tag of the end-to-end and external-tool suites in e2e/: they
# run the built binaries as processes; the SKILLSERVER_*_TEST variables
# switch on those that need a tool (README.md, "Two commands").
E2E := -tags e2e

# How long one package's tests may run: the e2e package takes 8-9 minutes
# under the race detector on 2 cores, close to go test's 10-minute default,
# past which go test kills it with nothing but a goroutine dump.
TEST_TIMEOUT := 30m

test: lint ## lint, then every test (the e2e suites too), with the race detector and the real-client interop tests
	SKILLSERVER_INTEROP=1 $(GO) test $(E2E) -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(GO) test -C $(SCRIPTS) -race -count=1 -timeout $(TEST_TIMEOUT) ./...

# Tests run on Linux; the binary must also build for these.
CROSS_GOOS := linux darwin windows

lint: ## gofmt, go vet, staticcheck, and a build for each of CROSS_GOOS
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(E2E) ./...
	$(GO) vet -tags 'e2e,$(NO_DRIVERS)' ./...
	$(GO) vet -C $(SCRIPTS) ./...
	$(TOOL) staticcheck $(E2E) ./...
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
	$(GO) build -C $(SCRIPTS) -o $(CURDIR)/bin/soak ./soak
	bin/soak $(SOAK_FLAGS)

golden: ## regenerate golden files under testdata/golden
	UPDATE_GOLDEN=1 $(GO) test $(E2E) -count=1 ./...

man: ## man pages of every command, generated from the command tree, into bin/man
	MAN_DIR=$(CURDIR)/bin/man $(GO) test -count=1 -run '^TestManPages$$' ./cmd/skillserver/
	@ls bin/man

validate: build ## validate the bundled example tree
	$(BIN) validate --skills testdata/skills --agents testdata/agents

# The image is scratch plus what this builds: both binaries per platform
# (bin/linux-ARCH/, cross-compiled: no emulation, the Dockerfile runs
# nothing) and the empty /skills and /agents mount points and the
# state folder /var/lib/skillserver (bin/image-root).
#
# With podman (DOCKER=podman, the default) each platform's image is built
# first and tagged IMAGE:VERSION-ARCH; only when all of them are built do
# IMAGE:VERSION and IMAGE:latest become one manifest list of them, which
# `podman manifest push --all IMAGE:VERSION docker://...` publishes. A
# failed build leaves the lists as they were, and a failed `manifest add`
# removes its list. A name without a registry host is stored by podman
# as localhost/NAME, so it is referred to by that name (containers-storage
# would resolve a short name against a registry). --format docker keeps
# the HEALTHCHECK (the OCI format has none); --layers=false leaves no
# intermediate images; --timestamp dates the image and its files at the
# commit. podman's docker-format config also records the build
# container's ID and host name, which differ per build, so each image is
# saved, rewritten without them (`release image`, scripts/release) and
# loaded back: two builds of one commit are the same image, ID included.
#
# With Docker (DOCKER=docker), `docker buildx build` builds every platform
# in one go and tags IMAGE:VERSION and IMAGE:latest; DOCKER_OUTPUT says
# where they go: --load (the default) needs Docker's containerd image
# store for a list of several platforms, --push a registry IMAGE.
PLATFORMS ?= linux/amd64 linux/arm64
ARCHES    := $(patsubst linux/%,%,$(PLATFORMS))
DOCKER_OUTPUT ?= --load
IMAGE_BUILD_ARGS = --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --build-arg CREATED=$(CREATED)
image_host = $(firstword $(subst /, ,$(IMAGE)))
IMAGE_REF  = $(if $(and $(findstring /,$(IMAGE)),$(or $(findstring .,$(image_host)),$(findstring :,$(image_host)),$(filter localhost,$(image_host)))),$(IMAGE),localhost/$(IMAGE))
comma := ,
empty :=
space := $(empty) $(empty)

image-binaries:
	rm -rf $(IMAGE_ROOT) bin/linux-*
	mkdir -p $(IMAGE_ROOT)/skills $(IMAGE_ROOT)/agents $(IMAGE_ROOT)/var/lib/skillserver
	@set -e; $(BUILD_PAIR); for arch in $(ARCHES); do build_pair linux $$arch bin/linux-$$arch; done

docker: image-binaries $(RELEASE_TOOL) ## build IMAGE:VERSION and :latest for PLATFORMS as one manifest list (podman, or DOCKER=docker)
ifeq ($(findstring docker,$(notdir $(firstword $(DOCKER)))),docker)
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(DOCKER) buildx build --platform $(subst $(space),$(comma),$(strip $(PLATFORMS))) $(IMAGE_BUILD_ARGS) \
		-t $(IMAGE):$(VERSION) -t $(IMAGE):latest $(DOCKER_OUTPUT) .
else
	@set -e; for arch in $(ARCHES); do \
		echo "$(DOCKER) build --platform linux/$$arch -t $(IMAGE_REF):$(VERSION)-$$arch"; \
		$(DOCKER) build --quiet --format docker --layers=false --timestamp $(SOURCE_DATE_EPOCH) \
			--platform linux/$$arch $(IMAGE_BUILD_ARGS) \
			-t $(IMAGE_REF):$(VERSION)-$$arch . >/dev/null; \
		built=$$($(DOCKER) image inspect --format '{{.Id}}' $(IMAGE_REF):$(VERSION)-$$arch); \
		$(DOCKER) save --format docker-archive -o bin/image-$$arch.tar $(IMAGE_REF):$(VERSION)-$$arch; \
		$(RELEASE_TOOL) image -in bin/image-$$arch.tar -out bin/image-$$arch.same.tar -tag $(IMAGE_REF):$(VERSION)-$$arch; \
		$(DOCKER) load --quiet -i bin/image-$$arch.same.tar >/dev/null; \
		rm -f bin/image-$$arch.tar bin/image-$$arch.same.tar; \
		if [ "$$($(DOCKER) image inspect --format '{{.Id}}' $(IMAGE_REF):$(VERSION)-$$arch)" != "$$built" ]; then \
			$(DOCKER) rmi $$built >/dev/null 2>&1 || true; fi; \
	done
	@set -e; for tag in $(VERSION) latest; do \
		list=$(IMAGE_REF):$$tag; \
		if $(DOCKER) manifest exists $$list; then $(DOCKER) manifest rm $$list >/dev/null; \
		elif $(DOCKER) image exists $$list; then $(DOCKER) untag $$list; fi; \
		echo "$(DOCKER) manifest create $$list"; \
		$(DOCKER) manifest create $$list >/dev/null; \
		for arch in $(ARCHES); do \
			$(DOCKER) manifest add $$list containers-storage:$(IMAGE_REF):$(VERSION)-$$arch >/dev/null \
				|| { $(DOCKER) manifest rm $$list >/dev/null; exit 1; }; \
		done; \
	done
	$(DOCKER) manifest inspect $(IMAGE_REF):$(VERSION)
endif

# The release (README.md, "Install"): for each of RELEASE_PLATFORMS an
# archive skillserver_VERSION_OS_ARCH.tar.gz (.zip for Windows) holding
# both binaries, LICENSE, NOTICE and README.md, and a CycloneDX SBOM of
# the Go modules linked into skillserver-export, which are skillserver's
# and the bucket drivers' (cyclonedx-gomod, run for that platform); then
# SHA256SUMS of them all. Two runs on one commit give the same bytes
# (scripts/release-check.sh): reproducible binaries, every archive entry
# at the commit's time (SOURCE_DATE_EPOCH), sorted, owned by 0:0, and
# SBOMs with no serial number and no timestamp. `make release` makes these
# and the image.
DIST ?= dist
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
RELEASE_DOCS := LICENSE NOTICE README.md
$(RELEASE_TOOL): FORCE
	$(GO) build -C $(SCRIPTS) -o $(CURDIR)/$(RELEASE_TOOL) ./release

FORCE:

dist: $(RELEASE_TOOL) ## release archives for RELEASE_PLATFORMS, their SBOMs and SHA256SUMS into dist/
	rm -rf $(DIST) bin/release
	mkdir -p $(DIST) bin/release
	@set -e; $(BUILD_PAIR); cdx=$$($(TOOL) -n cyclonedx-gomod); \
	for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; exe=; ext=tar.gz; \
		if [ $$os = windows ]; then exe=.exe; ext=zip; fi; \
		name=skillserver_$(VERSION)_$${os}_$$arch; \
		build_pair $$os $$arch bin/release/$$name $$exe; \
		echo "$(DIST)/$$name.$$ext"; \
		$(RELEASE_TOOL) archive -o $(DIST)/$$name.$$ext -prefix $$name -mtime $(SOURCE_DATE_EPOCH) \
			bin/release/$$name/skillserver$$exe bin/release/$$name/skillserver-export$$exe $(RELEASE_DOCS); \
		echo "$(DIST)/$$name.cdx.json"; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 GOFLAGS=-trimpath $$cdx app -json -noserial -notimestamp -licenses \
			-main cmd/skillserver -output $(DIST)/$$name.cdx.json .; \
	done
	$(RELEASE_TOOL) sums $(DIST)
	cat $(DIST)/SHA256SUMS

release: dist docker ## make dist, then the image (make release VERSION=vX.Y.Z)

clean: ## remove build output (bin/, dist/)
	rm -rf bin $(DIST)
