// Package api holds the published contracts: OpenAPI and JSON Schemas, with examples.
package api

import _ "embed"

// OpenAPI is openapi.yaml, which the server publishes at /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte

// A2ASchema is the A2A protocol's JSON Schema at v0.3.0 (draft-07; see
// reference/README.md), which `skillserver check` validates agent cards
// against.
//
//go:embed reference/a2a-v0.3.0.schema.json
var A2ASchema []byte

// A2ASchemaID is the identifier A2ASchema is compiled under; its AgentCard
// is A2ASchemaID + "#/definitions/AgentCard".
const A2ASchemaID = "https://a2a-protocol.org/v0.3.0/a2a.json"
