package api_test

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/skillserver/skillserver/internal/httpapi"
	"github.com/skillserver/skillserver/internal/metrics"
)

const openAPIFile = "openapi.yaml"

// The parts of an OpenAPI 3.1 document the tests read.
type openAPIDoc struct {
	OpenAPI    string                          `yaml:"openapi"`
	Info       struct{ Description string }    `yaml:"info"`
	Paths      map[string]map[string]yaml.Node `yaml:"paths"`
	Components struct {
		Parameters map[string]parameter `yaml:"parameters"`
		Responses  map[string]response  `yaml:"responses"`
	} `yaml:"components"`
}

type operation struct {
	OperationID string              `yaml:"operationId"`
	Parameters  []parameter         `yaml:"parameters"`
	Responses   map[string]response `yaml:"responses"`
}

type parameter struct {
	Ref      string `yaml:"$ref"`
	Name     string `yaml:"name"`
	In       string `yaml:"in"`
	Required bool   `yaml:"required"`
	Example  any    `yaml:"example"`
}

type response struct {
	Ref     string               `yaml:"$ref"`
	Headers map[string]yaml.Node `yaml:"headers"`
	Content map[string]struct {
		Schema struct {
			Ref string `yaml:"$ref"`
		} `yaml:"schema"`
	} `yaml:"content"`
}

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// loadOpenAPI parses api/openapi.yaml, both typed and as a node tree.
func loadOpenAPI(t *testing.T) (*openAPIDoc, *yaml.Node) {
	t.Helper()
	b, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc openAPIDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", openAPIFile, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatalf("%s: %v", openAPIFile, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("%s: openapi is %q, want 3.1.x", openAPIFile, doc.OpenAPI)
	}
	if len(doc.Paths) == 0 {
		t.Fatalf("%s: no paths", openAPIFile)
	}
	return &doc, &root
}

// operations returns the operations of one path item by upper-case method.
func (d *openAPIDoc) operations(t *testing.T, path string) map[string]operation {
	t.Helper()
	ops := make(map[string]operation)
	for key, node := range d.Paths[path] {
		if !slices.Contains(httpMethods, key) {
			continue
		}
		var op operation
		if err := node.Decode(&op); err != nil {
			t.Fatalf("%s %s: %v", key, path, err)
		}
		ops[strings.ToUpper(key)] = op
	}
	return ops
}

// parameters returns the parameters of an operation, path-level ones
// included, with references resolved.
func (d *openAPIDoc) parameters(t *testing.T, path string, op operation) []parameter {
	t.Helper()
	var all []parameter
	if node, ok := d.Paths[path]["parameters"]; ok {
		if err := node.Decode(&all); err != nil {
			t.Fatalf("%s parameters: %v", path, err)
		}
	}
	all = append(all, op.Parameters...)
	for i, p := range all {
		if p.Ref == "" {
			continue
		}
		name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
		resolved, found := d.Components.Parameters[name]
		if !ok || !found {
			t.Fatalf("%s: parameter %s does not resolve", path, p.Ref)
		}
		all[i] = resolved
	}
	return all
}

// response returns the documented response of op for status, resolved.
func (d *openAPIDoc) response(op operation, status int) (response, bool) {
	r, ok := op.Responses[strconv.Itoa(status)]
	if !ok {
		return response{}, false
	}
	return d.resolveResponse(r)
}

func (d *openAPIDoc) resolveResponse(r response) (response, bool) {
	if r.Ref == "" {
		return r, true
	}
	name, ok := strings.CutPrefix(r.Ref, "#/components/responses/")
	resolved, found := d.Components.Responses[name]
	return resolved, ok && found
}

// Routes: the router and the document must list the same paths and methods.

// jsonFileParams name the {file} parameters of chi patterns: chi cannot
// match "{version}.json" (its parameters end at the first dot, and
// versions hold dots), so the router takes the whole segment as {file}
// and strips ".json" itself. The segment before says which it is.
var jsonFileParams = map[string]string{
	"versions": "{version}.json",
	"pages":    "{page}.json",
}

// publicPath turns a chi route pattern into the path template documented
// in openapi.yaml: regexps dropped from parameters ({name:re} -> {name}),
// {file} after a known segment -> {param}.json, and a trailing catch-all
// "*" -> {path}, which may hold slashes.
func publicPath(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name, _, _ := strings.Cut(seg[1:len(seg)-1], ":")
			seg = "{" + name + "}"
		}
		if seg == "{file}" && i > 0 {
			if p, ok := jsonFileParams[segs[i-1]]; ok {
				seg = p
			}
		}
		if seg == "*" && i == len(segs)-1 {
			seg = "{path}"
		}
		segs[i] = seg
	}
	return strings.Join(segs, "/")
}

// servedRoutes lists the router's routes as "METHOD /public/path".
func servedRoutes(routes []string) []string {
	out := make([]string, 0, len(routes))
	for _, r := range routes {
		method, pattern, ok := strings.Cut(r, " ")
		if !ok {
			method, pattern = "?", r
		}
		out = append(out, method+" "+publicPath(pattern))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// documentedRoutes lists openapi.yaml's operations as "METHOD /path". A
// documented GET also stands for HEAD: info.description promises that
// every GET answers HEAD.
func documentedRoutes(t *testing.T, doc *openAPIDoc) []string {
	t.Helper()
	var out []string
	for path := range doc.Paths {
		for method := range doc.operations(t, path) {
			out = append(out, method+" "+path)
			if method == http.MethodGet {
				out = append(out, http.MethodHead+" "+path)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// diffRoutes returns what is served but not documented, and documented
// but not served.
func diffRoutes(served, documented []string) (undocumented, unserved []string) {
	for _, r := range served {
		if !slices.Contains(documented, r) {
			undocumented = append(undocumented, r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(served, r) {
			unserved = append(unserved, r)
		}
	}
	return undocumented, unserved
}

func TestRoutesMatchOpenAPI(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	if !strings.Contains(doc.Info.Description, "HEAD") {
		t.Fatal("info.description must state that every GET answers HEAD: documentedRoutes relies on it")
	}
	s := httpapi.NewServer(nil, httpapi.Options{Metrics: metrics.New(metrics.Build{}).Handler()}, slog.New(slog.DiscardHandler))
	served := servedRoutes(s.Routes())
	if len(served) == 0 {
		t.Fatal("the server lists no routes")
	}
	undocumented, unserved := diffRoutes(served, documentedRoutes(t, doc))
	for _, r := range undocumented {
		t.Errorf("served but not in %s: %s", openAPIFile, r)
	}
	for _, r := range unserved {
		t.Errorf("in %s but not served: %s", openAPIFile, r)
	}
}

func TestTemplateRegexp(t *testing.T) {
	tests := []struct {
		template, path string
		want           bool
	}{
		{"/api/v1/skills/{name}", "/api/v1/skills/check-updates", true},
		{"/api/v1/skills/{name}", "/api/v1/skills/a/b", false},
		{"/skills/v1/{name}/versions/{version}.json", "/skills/v1/x/versions/1.2.0.json", true},
		{"/skills/v1/{name}/versions/{version}.json", "/skills/v1/x/versions/1.2.0", false},
		{"/api/v1/skills/{name}/{version}/{path}", "/api/v1/skills/x/1.0.0/scripts/deploy.sh", true},
		{"/api/v1/skills/{name}/{version}/{path}", "/api/v1/skills/x/1.0.0", false},
		{"/manifest.json", "/manifestXjson", false},
	}
	for _, tt := range tests {
		if got := templateRegexp(tt.template).MatchString(tt.path); got != tt.want {
			t.Errorf("templateRegexp(%q) matches %q: %v, want %v", tt.template, tt.path, got, tt.want)
		}
	}
}

func TestPublicPath(t *testing.T) {
	tests := []struct{ name, pattern, want string }{
		{"static", "/manifest.json", "/manifest.json"},
		{"param", "/skills/v1/{name}/index.json", "/skills/v1/{name}/index.json"},
		{"version file", "/skills/v1/{name}/versions/{file}", "/skills/v1/{name}/versions/{version}.json"},
		{"page file", "/subagents/v1/pages/{file}", "/subagents/v1/pages/{page}.json"},
		{"unknown file stays", "/things/{file}", "/things/{file}"},
		{"catch-all", "/api/v1/skills/{name}/{version}/*", "/api/v1/skills/{name}/{version}/{path}"},
		{"regexp param", "/api/v1/blobs/sha256/{digest:[0-9a-f]+}", "/api/v1/blobs/sha256/{digest}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := publicPath(tt.pattern); got != tt.want {
				t.Errorf("publicPath(%q) = %q, want %q", tt.pattern, got, tt.want)
			}
		})
	}
}

// TestDiffRoutes shows the contract test fails in both directions.
func TestDiffRoutes(t *testing.T) {
	served := servedRoutes([]string{"GET /a", "HEAD /a", "GET /b/{file}", "HEAD /b/{file}", "POST /c"})
	doc := &openAPIDoc{Paths: map[string]map[string]yaml.Node{
		"/a":     {"get": yaml.Node{Kind: yaml.MappingNode}},
		"/b/{x}": {"get": yaml.Node{Kind: yaml.MappingNode}},
		"/d":     {"get": yaml.Node{Kind: yaml.MappingNode}},
	}}
	undocumented, unserved := diffRoutes(served, documentedRoutes(t, doc))
	wantUndoc := []string{"GET /b/{file}", "HEAD /b/{file}", "POST /c"}
	wantUnserved := []string{"GET /b/{x}", "GET /d", "HEAD /b/{x}", "HEAD /d"}
	if !slices.Equal(undocumented, wantUndoc) || !slices.Equal(unserved, wantUnserved) {
		t.Errorf("undocumented %q, want %q; unserved %q, want %q", undocumented, wantUndoc, unserved, wantUnserved)
	}
}

// The document itself.

var templateParam = regexp.MustCompile(`\{([^{}]+)\}`)

// TestOpenAPIWellFormed checks what a generator or a reader relies on:
// unique operation ids, and path parameters that match the template.
func TestOpenAPIWellFormed(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	ids := make(map[string]string)
	for path := range doc.Paths {
		var inTemplate []string
		for _, m := range templateParam.FindAllStringSubmatch(path, -1) {
			inTemplate = append(inTemplate, m[1])
		}
		slices.Sort(inTemplate)
		for method, op := range doc.operations(t, path) {
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s: no operationId", where)
			} else if other, dup := ids[op.OperationID]; dup {
				t.Errorf("%s: operationId %s also used by %s", where, op.OperationID, other)
			}
			ids[op.OperationID] = where
			if _, ok := op.Responses["200"]; !ok {
				t.Errorf("%s: no 200 response", where)
			}
			var declared []string
			for _, p := range doc.parameters(t, path, op) {
				if p.In != "path" {
					continue
				}
				declared = append(declared, p.Name)
				if !p.Required {
					t.Errorf("%s: path parameter %s is not required", where, p.Name)
				}
				if p.Example == nil {
					t.Errorf("%s: path parameter %s has no example (TestOpenAPIOperationsAnswer requests it)", where, p.Name)
				}
			}
			slices.Sort(declared)
			if !slices.Equal(declared, inTemplate) {
				t.Errorf("%s: path parameters %q, template has %q", where, declared, inTemplate)
			}
		}
	}
}

// TestOpenAPIRefsResolve checks every $ref in openapi.yaml: local ones
// point into the document, file ones name an existing file (and, with a
// fragment, a node inside it). Every schema file must be referenced.
func TestOpenAPIRefsResolve(t *testing.T) {
	_, root := loadOpenAPI(t)
	var refs []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "$ref" {
					refs = append(refs, n.Content[i+1].Value)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	if len(refs) == 0 {
		t.Fatal("no $ref in openapi.yaml")
	}
	used := make(map[string]bool)
	for _, ref := range refs {
		file, fragment, _ := strings.Cut(ref, "#")
		if file == "" {
			if yamlPointer(root, fragment) == nil {
				t.Errorf("$ref %q does not resolve in %s", ref, openAPIFile)
			}
			continue
		}
		if !strings.HasPrefix(file, "./schemas/") {
			t.Errorf("$ref %q: external references must be ./schemas/*.schema.json", ref)
			continue
		}
		used[filepath.Base(file)] = true
		b, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("$ref %q: %v", ref, err)
			continue
		}
		if fragment != "" {
			var n yaml.Node // JSON is YAML
			if err := yaml.Unmarshal(b, &n); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if yamlPointer(&n, fragment) == nil {
				t.Errorf("$ref %q: no %s in %s", ref, fragment, file)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	for _, f := range files {
		if !used[filepath.Base(f)] && !cliSchemas[filepath.Base(f)] {
			t.Errorf("%s is not referenced from %s", f, openAPIFile)
		}
	}
}

// cliSchemas describe command output, not responses: no route serves
// them, so openapi.yaml does not reference them.
var cliSchemas = map[string]bool{"check-report.schema.json": true}

// yamlPointer resolves a JSON pointer ("/a/b") in a YAML node tree.
func yamlPointer(n *yaml.Node, pointer string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if pointer == "" {
		return n
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// The document against the running server.
