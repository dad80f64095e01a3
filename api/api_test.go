package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/skillserver/skillserver/api"
)

// schemaBase is where the schemas are published; every schema's $id is
// schemaBase + its file name, so relative $refs between them resolve.
const schemaBase = "https://skillserver.dev/schemas/"

const (
	schemaDir  = "schemas"
	exampleDir = "examples"
	goldenDir  = "../testdata/golden"
)

// sharedSchemas hold definitions only; they are not a document kind and
// have no examples.
var sharedSchemas = map[string]bool{"common": true}

// goldenSchemas maps every file in testdata/golden to the kind of its
// schema. A golden file missing here fails TestGoldenDocumentsValidate, so
// a new document kind cannot go unvalidated.
var goldenSchemas = map[string]string{
	"rfc-index.json":             "rfc-index",
	"manifest.json":              "manifest",
	"skill-index.json":           "skill-index",
	"skill-page.json":            "skill-page",
	"skill.json":                 "skill",
	"skill-version.json":         "skill-version",
	"skill-version-archive.json": "skill-version",
	"subagent-index.json":        "subagent-index",
	"subagent-page.json":         "subagent-page",
	"subagent.json":              "subagent",
	"subagent-version.json":      "subagent-version",
	"error.json":                 "error",
	"api-search.json":            "search-results",
	"api-skill.json":             "api-skill",
	"api-skill-version.json":     "api-skill-version",
	"api-skill-resources.json":   "api-skill-resources",
	"api-subagent.json":          "api-subagent",
	"api-subagent-version.json":  "api-subagent-version",
	"agent-card.json":            "agent-card",
	"ai-catalog.json":            "ai-catalog",
	"legacy-index.json":          "legacy-index",
	"scoped-index.json":          "scoped-index",
	// The same documents read from git checkouts, with provenance.
	"checkout-skill.json":                "skill",
	"checkout-skill-version.json":        "skill-version",
	"checkout-subagent.json":             "subagent",
	"checkout-subagent-version.json":     "subagent-version",
	"checkout-api-skill.json":            "api-skill",
	"checkout-api-skill-version.json":    "api-skill-version",
	"checkout-api-subagent.json":         "api-subagent",
	"checkout-api-subagent-version.json": "api-subagent-version",
	"checkout-agent-card.json":           "agent-card",
}

// schemaSet is every schema under api/schemas, compiled, by kind (the
// file name without .schema.json).
type schemaSet map[string]*jsonschema.Schema

func (s schemaSet) kinds() []string {
	var out []string
	for k := range s {
		if !sharedSchemas[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// loadSchemas compiles every schema file. Each is registered under its
// $id, which must be schemaBase + file name; nothing is fetched.
func loadSchemas(t *testing.T) schemaSet {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in %s: %v", schemaDir, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	ids := make(map[string]string, len(files))
	for _, f := range files {
		doc := readJSON(t, f)
		base := filepath.Base(f)
		id, _ := doc.(map[string]any)["$id"].(string)
		if want := schemaBase + base; id != want {
			t.Fatalf("%s: $id is %q, want %q", f, id, want)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ids[strings.TrimSuffix(base, ".schema.json")] = id
	}
	set := make(schemaSet, len(ids))
	for kind, id := range ids {
		sch, err := c.Compile(id)
		if err != nil {
			t.Fatalf("compile %s: %v", id, err)
		}
		set[kind] = sch
	}
	return set
}

// readJSON decodes a file the way the validator expects (numbers as
// json.Number), refusing trailing data.
func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func decodeJSON(b []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func TestSchemasCompile(t *testing.T) {
	set := loadSchemas(t)
	if len(set.kinds()) == 0 {
		t.Fatal("no document schemas")
	}
	for _, k := range set.kinds() {
		doc := readJSON(t, filepath.Join(schemaDir, k+".schema.json")).(map[string]any)
		if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema is %v, want draft 2020-12", k, doc["$schema"])
		}
		if d, _ := doc["description"].(string); d == "" {
			t.Errorf("%s: no description", k)
		}
	}
}

func TestGoldenDocumentsValidate(t *testing.T) {
	set := loadSchemas(t)
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s: %v", goldenDir, err)
	}
	seen := make(map[string]bool)
	for _, f := range files {
		name := filepath.Base(f)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			kind, ok := goldenSchemas[name]
			if !ok {
				t.Fatalf("no schema mapped for golden file %s: add it to goldenSchemas (and a schema under api/schemas if it is a new kind)", name)
			}
			sch, ok := set[kind]
			if !ok {
				t.Fatalf("goldenSchemas maps %s to %q, which has no schema", name, kind)
			}
			if err := sch.Validate(readJSON(t, f)); err != nil {
				t.Errorf("%s does not match %s.schema.json:\n%v", f, kind, err)
			}
		})
	}
	for name := range goldenSchemas {
		if !seen[name] {
			t.Errorf("goldenSchemas names %s, which is not in %s", name, goldenDir)
		}
	}
}

func TestExamples(t *testing.T) {
	set := loadSchemas(t)
	for _, dir := range []string{"valid", "invalid"} {
		entries, err := os.ReadDir(filepath.Join(exampleDir, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if _, ok := set[e.Name()]; !ok || sharedSchemas[e.Name()] || !e.IsDir() {
				t.Errorf("%s/%s/%s: not a document kind with a schema", exampleDir, dir, e.Name())
			}
		}
	}
	for _, kind := range set.kinds() {
		t.Run(kind, func(t *testing.T) {
			sch := set[kind]
			valid := exampleFiles(t, "valid", kind)
			invalid := exampleFiles(t, "invalid", kind)
			if len(valid) < 1 || len(invalid) < 2 {
				t.Fatalf("%s has %d valid and %d invalid examples; want at least 1 and 2 under %s/{valid,invalid}/%s/",
					kind, len(valid), len(invalid), exampleDir, kind)
			}
			for _, f := range valid {
				if err := sch.Validate(readJSON(t, f)); err != nil {
					t.Errorf("%s should be valid:\n%v", f, err)
				}
			}
			for _, f := range invalid {
				if err := sch.Validate(readJSON(t, f)); err == nil {
					t.Errorf("%s should be invalid (its name says why), but it validates", f)
				}
			}
		})
	}
}

func exampleFiles(t *testing.T, validity, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(exampleDir, validity, kind, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestExamplesAreCanonical keeps the examples in the published style, so
// they can be read next to real output: two-space indent, trailing newline.
// Most documents are objects; a few (search results, check-updates) are
// arrays.
func TestExamplesAreCanonical(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(exampleDir, "*", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "  "); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		closed := bytes.HasSuffix(b, []byte("}\n")) || bytes.HasSuffix(b, []byte("]\n"))
		if !bytes.Equal(bytes.TrimRight(buf.Bytes(), "\n"), bytes.TrimRight(b, "\n")) || !closed || bytes.HasSuffix(b, []byte("\n\n")) {
			t.Errorf("%s: not two-space indented JSON with one trailing newline", f)
		}
	}
}

// a2aSchema is the A2A protocol's own JSON Schema at v0.3.0 (draft-07),
// copied unchanged from the A2A project (see reference/README.md).
const a2aSchema = "reference/a2a-v0.3.0.schema.json"

// a2aAgentCard compiles #/definitions/AgentCard of the A2A schema.
func a2aAgentCard(t *testing.T) *jsonschema.Schema {
	t.Helper()
	const id = api.A2ASchemaID
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, readJSON(t, a2aSchema)); err != nil {
		t.Fatalf("%s: %v", a2aSchema, err)
	}
	card, err := c.Compile(id + "#/definitions/AgentCard")
	if err != nil {
		t.Fatalf("compile %s#/definitions/AgentCard: %v", a2aSchema, err)
	}
	return card
}

// TestAgentCardMatchesA2A validates the agent card against the A2A schema
// itself, not only against our stricter agent-card.schema.json: the golden
// card the server renders, and every valid agent-card example.
// TestOpenAPIOperationsAnswer checks the live card the same way.
func TestAgentCardMatchesA2A(t *testing.T) {
	card := a2aAgentCard(t)
	files := append([]string{filepath.Join(goldenDir, "agent-card.json"), filepath.Join(goldenDir, "checkout-agent-card.json")}, exampleFiles(t, "valid", "agent-card")...)
	for _, f := range files {
		if err := card.Validate(readJSON(t, f)); err != nil {
			t.Errorf("%s is not an A2A v0.3.0 AgentCard:\n%v", f, err)
		}
	}
	// The A2A schema must be strict enough to matter: a card without the
	// fields it requires fails.
	for _, drop := range []string{"protocolVersion", "url", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
		doc := readJSON(t, filepath.Join(goldenDir, "agent-card.json")).(map[string]any)
		delete(doc, drop)
		if err := card.Validate(doc); err == nil {
			t.Errorf("the A2A AgentCard schema accepts a card without %s", drop)
		}
	}
	doc := readJSON(t, filepath.Join(goldenDir, "agent-card.json")).(map[string]any)
	skills, _ := doc["skills"].([]any)
	if len(skills) == 0 {
		t.Fatal("the golden agent card has no skills")
	}
	delete(skills[0].(map[string]any), "tags")
	if err := card.Validate(doc); err == nil {
		t.Error("the A2A AgentCard schema accepts a skill without tags")
	}
}

// aiCatalogSchema is ARD v0.9's own AI catalogue schema (Draft 2020-12),
// copied unchanged (see reference/README.md).
const aiCatalogSchema = "reference/ai-catalog.schema.json"

// ardSchema compiles ARD's AI catalogue schema.
func ardSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	const id = "https://raw.githubusercontent.com/ards-project/ard-spec/main/spec/schemas/ai-catalog.schema.json"
	if err := c.AddResource(id, readJSON(t, aiCatalogSchema)); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(id)
	if err != nil {
		t.Fatalf("compile %s: %v", aiCatalogSchema, err)
	}
	return schema
}

// TestAICatalogMatchesARD validates the AI catalogue against ARD's schema
// itself, not only against our stricter ai-catalog.schema.json: the
// golden catalogue the server renders and every valid example; and the
// schema must be strict enough to matter.
func TestAICatalogMatchesARD(t *testing.T) {
	schema := ardSchema(t)
	golden := filepath.Join(goldenDir, "ai-catalog.json")
	for _, f := range append([]string{golden}, exampleFiles(t, "valid", "ai-catalog")...) {
		if err := schema.Validate(readJSON(t, f)); err != nil {
			t.Errorf("%s is not an ARD AI catalogue:\n%v", f, err)
		}
	}
	for name, mutate := range map[string]func(doc map[string]any){
		"no specVersion":   func(doc map[string]any) { delete(doc, "specVersion") },
		"an unknown key":   func(doc map[string]any) { doc["collections"] = []any{} },
		"a bad identifier": func(doc map[string]any) { doc["entries"].([]any)[0].(map[string]any)["identifier"] = "urn:ai:x" },
		"one query": func(doc map[string]any) {
			doc["entries"].([]any)[0].(map[string]any)["representativeQueries"] = []any{"q"}
		},
		"no url and no data": func(doc map[string]any) { delete(doc["entries"].([]any)[0].(map[string]any), "url") },
	} {
		doc := readJSON(t, golden).(map[string]any)
		mutate(doc)
		if err := schema.Validate(doc); err == nil {
			t.Errorf("ARD's schema accepts a catalogue with %s", name)
		}
	}
}
