// Package api holds the published contracts: OpenAPI and JSON Schemas, with examples.
package api

import _ "embed"

// OpenAPI is openapi.yaml, which the server publishes at /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
