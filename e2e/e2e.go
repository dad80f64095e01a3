// Package e2e holds the end-to-end and external-tool tests: each runs
// the built skillserver binaries as processes, and some run real clients
// and tools against them (the skills npm CLI, nginx, podman, Prometheus,
// Chromium, an S3 server, helm). Its tests are behind the build tag e2e,
// which `make test` and .ci/run set; the suites that need a tool are
// switched on by the same SKILLSERVER_*_TEST variables as before
// (README.md, "Two commands"). This file, without the tag, only names the
// package.
package e2e
