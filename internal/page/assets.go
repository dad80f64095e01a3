package page

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"strings"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
)

// assetFiles are the files the pages load (the assets folder).
//
//go:embed assets
var assetFiles embed.FS

// An asset is an embedded file a page loads, at a URL that names its
// digest: a new binary with other bytes has other URLs, so an asset may
// be cached forever.
type asset struct {
	body        []byte
	contentType string
	digest      content.Digest
	href        string // root-relative
	// integrity is the SRI metadata of body (sha256-<base64>); the
	// script's is its tag's integrity attribute and the policy's
	// hash-source.
	integrity string
}

type assetSet struct {
	script, icon asset
	byFile       map[string]*asset // by the last segment of href
}

// assets are the files under assets/ that pages load; the style sheet
// is inlined instead (one response per page), allowed by its hash.
var assets = loadAssets()

func loadAssets() *assetSet {
	s := &assetSet{script: newAsset("app.js", "text/javascript; charset=utf-8"), icon: newAsset("icon.svg", "image/svg+xml")}
	s.byFile = map[string]*asset{}
	for _, a := range []*asset{&s.script, &s.icon} {
		s.byFile[a.href[strings.LastIndexByte(a.href, '/')+1:]] = a
	}
	return s
}

func newAsset(name, contentType string) asset {
	b, err := assetFiles.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // embedded at build time
	}
	d := content.Sum(b)
	stem, ext, _ := strings.Cut(name, ".")
	return asset{body: b, contentType: contentType, digest: d, href: feed.Href(feed.PathUIAsset, stem+"."+d.Hex()[:16]+"."+ext), integrity: sriHash(b)}
}

// Asset returns the embedded file at the last path segment file of
// feed.PathUIAsset, its media type and digest.
func Asset(file string) (body []byte, contentType string, digest content.Digest, ok bool) {
	a, ok := assets.byFile[file]
	if !ok {
		return nil, "", "", false
	}
	return a.body, a.contentType, a.digest, true
}

// logoHref is the root-relative URL of the server's logo (server_logo),
// named by its digest as the embedded assets are; "" for none.
func logoHref(info feed.ServerInfo) string {
	if len(info.Logo) == 0 {
		return ""
	}
	ext := "svg"
	if info.LogoType == "image/png" {
		ext = "png"
	}
	return feed.Href(feed.PathUIAsset, "logo."+content.Sum(info.Logo).Hex()[:16]+"."+ext)
}

// Logo returns the server's logo when file is the last segment of its
// URL (logoHref).
func Logo(info feed.ServerInfo, file string) (body []byte, contentType string, digest content.Digest, ok bool) {
	href := logoHref(info)
	if href == "" || href[strings.LastIndexByte(href, '/')+1:] != file {
		return nil, "", "", false
	}
	return info.Logo, info.LogoType, content.Sum(info.Logo), true
}

// AssetHrefs lists the root-relative URLs of the embedded assets.
func AssetHrefs() []string { return []string{assets.script.href, assets.icon.href} }

// styleCSS is the style sheet every page inlines.
var styleCSS = mustRead("assets/style.css")

func mustRead(name string) string {
	b, err := assetFiles.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time
	}
	return string(b)
}

// SecurityPolicy is the Content-Security-Policy of every page: nothing
// loads but the page's own script, this origin's images and the inline
// style sheet (by its hash); no inline script, no plugin, no frame, no
// form to elsewhere, and no base element can move relative URLs. The
// script may read this origin (a skill's live fetch count).
//
// script-src names the embedded script by its hash, not 'self': 'self'
// would run any script this origin serves, and a skill's .js resource is
// served from this origin too (under /api/v1/), so one injected script
// tag would run a skill's code as the page. A hash-source allows an
// external script whose integrity attribute carries that hash (CSP
// Level 3: Chromium 59, Safari 15.6, Firefox 116 and later), and
// subresource integrity then checks that the bytes fetched have it: a
// script tag without the attribute, or with it on other bytes, does not
// run. The policy stays one constant, the same under a path token and
// for every host, which an exact URL (a host-source with the asset's
// path) would not be. A browser that does not match hashes to external
// scripts runs none, and the pages work without it.
var SecurityPolicy = "default-src 'none'; script-src '" + assets.script.integrity + "'; style-src '" + sriHash([]byte(styleCSS)) + "'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Header is one response header, by its canonical name.
type Header struct{ Name, Value string }

// SecurityHeaders are the headers every page goes out with, from serve
// and, through an export's headers file, from a static host: its policy,
// no sniffing, no framing, and no Referer beyond this origin.
var SecurityHeaders = []Header{
	{"Content-Security-Policy", SecurityPolicy},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"Referrer-Policy", "same-origin"},
}

// metaPolicy is SecurityPolicy as every page also carries it in a meta
// element, for a static host that sends no header (a bucket, GitHub
// Pages): frame-ancestors is the one directive a meta element cannot
// carry (browsers ignore it there, with a warning), so it is left out;
// the header keeps it where there is one.
var metaPolicy = strings.TrimSuffix(SecurityPolicy, "; frame-ancestors 'none'")

// sriHash is the sha256 hash-source of b, as CSP and subresource
// integrity write it.
func sriHash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
