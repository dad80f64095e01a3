package feed

import "strings"

// APICatalogProfile is the profile of an RFC 9727 API catalog, sent as
// the profile parameter of its media type, application/linkset+json.
const APICatalogProfile = "https://www.rfc-editor.org/info/rfc9727"

// Media types of the API catalog and of the OpenAPI description.
const (
	APICatalogContentType = `application/linkset+json; profile="` + APICatalogProfile + `"`
	OpenAPIContentType    = "application/yaml"
)

// Linkset is an RFC 9264 linkset in its JSON form: link contexts, each
// with its links by relation type.
type Linkset struct {
	Linkset []LinkContext `json:"linkset"`
}

// LinkContext is one anchor and its links. The relations an API catalog
// uses are "item" (RFC 9727: each API the catalog lists), "service-desc"
// (RFC 8631: a machine-readable description) and "status".
type LinkContext struct {
	Anchor      string       `json:"anchor"`
	Item        []TargetLink `json:"item,omitempty"`
	ServiceDesc []TargetLink `json:"service-desc,omitempty"`
	Status      []TargetLink `json:"status,omitempty"`
}

// TargetLink is one link's target.
type TargetLink struct {
	Href  string `json:"href"`
	Type  string `json:"type,omitempty"`
	Title string `json:"title,omitempty"`
}

// catalogAPI is an entry point the API catalog lists; a dynamic one is
// answered only by a running server, at the API's base.
type catalogAPI struct {
	TargetLink
	dynamic bool
}

// catalogAPIs are the entry points the API catalog lists, in order.
var catalogAPIs = []catalogAPI{
	{TargetLink: TargetLink{Href: docPaths[DocRFCIndex][0], Type: "application/json", Title: "Agent Skills Discovery index"}},
	{TargetLink: TargetLink{Href: docPaths[DocManifest][0], Type: "application/json", Title: "Native manifest of skills and sub-agents"}},
	{TargetLink: TargetLink{Href: docPaths[DocAgentCard][0], Type: "application/json", Title: "A2A agent card"}},
	{TargetLink: TargetLink{Href: docPaths[DocAICatalog][0], Type: AICatalogContentType, Title: "AI catalogue (Agentic Resource Discovery)"}},
	{TargetLink: TargetLink{Href: PathSkillSearch, Type: "application/json", Title: "Read API: search, skills, versions and update checks"}, dynamic: true},
}

// APICatalog is the document at PathAPICatalog for base (scheme://host,
// no trailing slash): the catalog lists every entry point as an item, and
// each entry point links to the OpenAPI description that documents it and
// to the health probe. Every href is absolute, as RFC 9727 asks. The
// read API and the health probe are at apiBase, the server's own base
// when it answers; a static export that names no live server passes ""
// and lists neither.
func APICatalog(base, apiBase string) Linkset {
	desc := []TargetLink{{Href: base + PathOpenAPI, Type: OpenAPIContentType}}
	var status []TargetLink
	if apiBase != "" {
		status = []TargetLink{{Href: apiBase + PathHealth, Type: "application/json"}}
	}
	ls := Linkset{Linkset: []LinkContext{{Anchor: base + PathAPICatalog}}}
	for _, api := range catalogAPIs {
		link := api.TargetLink
		switch {
		case api.dynamic && apiBase == "":
			continue
		case api.dynamic:
			link.Href = apiBase + link.Href
		default:
			link.Href = base + link.Href
		}
		ls.Linkset[0].Item = append(ls.Linkset[0].Item, link)
		ls.Linkset = append(ls.Linkset, LinkContext{Anchor: link.Href, ServiceDesc: desc, Status: status})
	}
	return ls
}

// RootLinks is the Link header value of PathRoot (RFC 8288): the API
// catalog (RFC 9727 §3), the OpenAPI description and the entry points the
// catalog lists, root-relative, so it does not depend on the base. Each
// starts with prefix, the path token of the request ("" for none), as
// every root-relative href of a view does.
func RootLinks(prefix string) string {
	links := []string{
		"<" + prefix + PathAPICatalog + `>; rel="api-catalog"`,
		"<" + prefix + PathOpenAPI + `>; rel="service-desc"; type=` + OpenAPIContentType,
	}
	for _, api := range catalogAPIs {
		links = append(links, "<"+prefix+api.Href+`>; rel="item"; type="`+api.Type+`"`)
	}
	// The AI catalogue's own relations: ARD v0.9 and the AI Catalog name
	// "ai-catalog", ARD v0.91 "ard" (at its newer path).
	links = append(links, "<"+prefix+docPaths[DocAICatalog][0]+`>; rel="ai-catalog"`,
		"<"+prefix+docPaths[DocAICatalog][1]+`>; rel="ard"`)
	return strings.Join(links, ", ")
}
