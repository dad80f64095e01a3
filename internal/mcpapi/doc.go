// Package mcpapi owns the MCP endpoint (docs/http-api.md, "Skills over
// MCP"): the skills extension of MCP (io.modelcontextprotocol/skills)
// over the streamable HTTP transport, read-only, served with the
// official Go SDK. From the top: the HTTP handler and its limits
// (handler.go), the SDK server and what it declares (server.go), the
// extension's methods skills/list and skills/get (skills.go), the
// resource methods resources/list, resources/read,
// resources/templates/list and resources/directory/read (resources.go),
// and at the ground the cursors (cursor.go), the method names
// (methods.go) and the SDK's log, at debug level (sdklog.go).
//
// It is stateless: no session outlives its HTTP request, so replicas
// behind a load balancer answer alike and nothing grows with clients.
// Every answer comes from the view of one snapshot (internal/feed),
// which its caller picks per request (Reader); it reads no file. It
// must not import internal/httpapi, which mounts it.
package mcpapi
