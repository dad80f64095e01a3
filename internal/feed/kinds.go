package feed

// kindInfo says how documents of one kind are made.
type kindInfo struct {
	// absolute documents hold absolute URLs, and so depend on the
	// client's base URL.
	absolute bool
	// retainable documents may still be fetched from a retired snapshot:
	// the per-item documents a client reaches by href while walking the
	// tree. Indexes always exist and are always current.
	retainable bool
	// agentTree documents exist only when a sub-agent source is
	// configured: without one the whole sub-agent tree is 404.
	agentTree bool
	// dynamic documents belong to the read API, which only a running
	// server answers: a static export leaves them out (StaticKeys).
	dynamic bool
	// identity is, for a page kind, the kind of the identity document
	// of an item named "pages", whose path the page pattern matches.
	identity DocKind
	// contentType is the document's media type; "" is JSONContentType.
	contentType string
	// render builds the document for key; ok is false when the view
	// has none. base is the base URL to make URLs absolute with.
	render func(f *Feed, base string, key DocKey) (any, bool)
}

var kinds = [docKinds]kindInfo{
	DocRFCIndex: {absolute: true, render: func(f *Feed, base string, _ DocKey) (any, bool) { return f.rfcIndex(base), true }},
	DocManifest: {render: func(f *Feed, _ string, _ DocKey) (any, bool) { return f.nativeManifest(), true }},
	DocSkillIndex: {render: func(f *Feed, _ string, _ DocKey) (any, bool) {
		return f.tree(false).indexDoc(f.pageSize), true
	}},
	DocSkillPage: {retainable: true, identity: DocSkill, render: func(f *Feed, _ string, k DocKey) (any, bool) {
		return f.tree(false).pageDoc(f.pageSize, k.Page)
	}},
	DocSkill: {retainable: true, render: func(f *Feed, _ string, k DocKey) (any, bool) { return f.tree(false).itemIdentity(k.Name) }},
	DocSkillVersion: {absolute: true, retainable: true, render: func(f *Feed, base string, k DocKey) (any, bool) {
		return f.skillVersionDoc(base, k.Name, k.Version)
	}},
	DocSubagentIndex: {agentTree: true, render: func(f *Feed, _ string, _ DocKey) (any, bool) {
		return f.tree(true).indexDoc(f.pageSize), true
	}},
	DocSubagentPage: {retainable: true, agentTree: true, identity: DocSubagent, render: func(f *Feed, _ string, k DocKey) (any, bool) {
		return f.tree(true).pageDoc(f.pageSize, k.Page)
	}},
	DocSubagent: {retainable: true, agentTree: true, render: func(f *Feed, _ string, k DocKey) (any, bool) {
		return f.tree(true).itemIdentity(k.Name)
	}},
	DocSubagentVersion: {absolute: true, retainable: true, agentTree: true, render: func(f *Feed, base string, k DocKey) (any, bool) {
		return f.agentVersionDoc(base, k.Name, k.Version)
	}},
	DocAPISkill: {dynamic: true, render: func(f *Feed, _ string, k DocKey) (any, bool) { return f.apiSkill(k.Name) }},
	DocAPISkillVersion: {dynamic: true, absolute: true, render: func(f *Feed, base string, k DocKey) (any, bool) {
		return f.apiSkillVersion(base, k.Name, k.Version)
	}},
	DocAPISkillResources: {dynamic: true, absolute: true, render: func(f *Feed, base string, k DocKey) (any, bool) {
		_, v, ok := f.skillVersion(k.Name, k.Version)
		if !ok {
			return nil, false
		}
		return apiResources(base, v), true
	}},
	DocAPISubagent: {dynamic: true, render: func(f *Feed, _ string, k DocKey) (any, bool) { return f.apiAgent(k.Name) }},
	DocAPISubagentVersion: {dynamic: true, absolute: true, render: func(f *Feed, base string, k DocKey) (any, bool) {
		return f.apiAgentVersion(base, k.Name, k.Version)
	}},
	DocAgentCard:   {absolute: true, render: func(f *Feed, base string, _ DocKey) (any, bool) { return f.agentCard(base), true }},
	DocLegacyIndex: {render: func(f *Feed, _ string, _ DocKey) (any, bool) { return f.legacyIndex(), true }},
	DocScopedIndex: {absolute: true, render: func(f *Feed, base string, k DocKey) (any, bool) { return f.scopedIndex(base, k.Name) }},
	DocAICatalog: {absolute: true, contentType: AICatalogContentType,
		render: func(f *Feed, base string, _ DocKey) (any, bool) { return f.aiCatalog(base), true }},
}

// ContentType is the media type documents of kind k are served with.
func (k DocKind) ContentType() string {
	if k.valid() && kinds[k].contentType != "" {
		return kinds[k].contentType
	}
	return JSONContentType
}

// Kinds lists every document kind.
func Kinds() []DocKind {
	out := make([]DocKind, 0, docKinds-1)
	for k := DocRFCIndex; k < docKinds; k++ {
		out = append(out, k)
	}
	return out
}

// StaticKeys lists the key of every document the view has that a static
// export holds: every kind but the read API's, each for every page, item
// and version it exists for. The sub-agent tree is left out when no
// sub-agent source is configured, as it is 404 then.
func (f *Feed) StaticKeys() []DocKey {
	var out []DocKey
	for _, k := range Kinds() {
		info := kinds[k]
		if info.dynamic || (info.agentTree && !f.AgentsConfigured) {
			continue
		}
		agents := info.agentTree
		params := Params(docPaths[k][0])
		switch {
		case len(params) == 0:
			out = append(out, DocKey{Kind: k})
		case params[0] == "page":
			for _, p := range f.tree(agents).pageList(f.pageSize) {
				out = append(out, DocKey{Kind: k, Page: p.name})
			}
		case len(params) == 1:
			for _, it := range f.tree(agents).items {
				out = append(out, DocKey{Kind: k, Name: it.name})
			}
		default:
			for _, it := range f.tree(agents).items {
				for _, v := range it.versions {
					out = append(out, DocKey{Kind: k, Name: it.name, Version: v.version})
				}
			}
		}
	}
	return out
}

// Retainable reports whether a client may still fetch a document of kind
// k from a retired snapshot (see kindInfo).
func (k DocKind) Retainable() bool { return k.valid() && kinds[k].retainable }

// absolute reports whether documents of kind k depend on the base URL.
func (k DocKind) absolute() bool { return k.valid() && kinds[k].absolute }

// KeyOf returns the key of the document of kind k at a path one of k's
// patterns matched, given the values of the pattern's parameters; ok is
// false when they name none. The page pattern also matches pages/index.json,
// which is the identity document of an item named "pages".
func (k DocKind) KeyOf(param func(name string) (string, bool)) (DocKey, bool) {
	key := DocKey{Kind: k}
	for _, p := range Params(docPaths[k][0]) {
		v, ok := param(p)
		switch p {
		case "name":
			key.Name = v
		case "version":
			key.Version = v
		case "page":
			key.Page = v
		}
		if !ok {
			return key, false
		}
	}
	if id := kinds[k].identity; id != 0 && key.Page == "index" {
		return DocKey{Kind: id, Name: "pages"}, true
	}
	return key, true
}

func (f *Feed) render(base string, key DocKey) (any, bool) {
	if !key.Kind.valid() {
		return nil, false
	}
	k := kinds[key.Kind]
	if k.agentTree && !f.AgentsConfigured {
		return nil, false // no sub-agent source: the whole tree is 404
	}
	return k.render(f, base, key)
}
