// Package api holds the published contracts: OpenAPI and JSON Schemas, with examples.
package api
