// Package check is a model client of skill servers and a conformance
// check built on it. The Client syncs from a feed the way netclaw's daemon
// and the Netclaw.SkillClient library do, request by request, and fails on
// anything they would reject; tests run it against the real server. Run
// walks any skill server with the same Client, adds what the other clients
// (the skills CLI, legacy readers, A2A gateways) rely on, and reports every
// broken rule by item and URL: `skillserver check`.
//
// It reads feeds only over HTTP and must not import the server's catalog,
// scan, feed or HTTP packages: the wire rules it enforces are its own
// statement of them (wire.go), so a mistake the server makes is not also
// the checker's. It uses internal/item for version order, internal/skill
// for front matter (netclaw's agent-md rules are those by design) and
// internal/content for digests.
//
// The files follow the walks: client.go fetches (bounds, redirects,
// digests), rfcwalk.go reads the RFC index and its artifacts, treewalk.go
// the native manifest tree and the sub-agent tree, mcpwalk.go the MCP
// endpoint as an MCP host reads the skills extension, synced.go is what a
// client keeps between passes, observer.go what Run collects while the
// client walks, check.go is Run and the checks no syncing
// client makes (the legacy index, the agent card, HTTP behaviour), and
// report.go the report.
package check
