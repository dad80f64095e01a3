//go:build e2e && race

package e2e

// raceEnabled: the tests run with the race detector, and so do the
// binaries TestMain builds.
const raceEnabled = true
