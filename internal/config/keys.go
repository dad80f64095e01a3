package config

import (
	"fmt"
	"strings"
	"time"
)

// Key documents one configuration key. Keys is the single list the loader,
// the flags and docs/configuration.md are built from.
//
// For a number or a duration, 0 is off (Off says so once, for every key):
// no limit, no timeout, no wait, nothing kept. A key whose Min is set
// has no off, because without it one client or one file could hold the
// server's memory, files or connections; MinWhy says why.
type Key struct {
	Name    string // config-file key
	Flag    string // command-line flag of `serve`, or ""
	Default any
	Help    string
	// Min is the least value of a number or duration key, of Default's
	// type; nil is 0, which is off.
	Min any
	// MinWhy is why a key with Min has no off.
	MinWhy string
}

// Off is what 0 means for every number and duration key that takes it:
// the one rule, written here for the docs, the example file and the
// flags' help.
const Off = "0 is off: a limit off is no limit, a timeout off never fires, an interval off never comes, and a cache, a buffer, retention or a delay off holds nothing"

// StateDirAuto is the state_dir value that picks a folder per tree, or
// memory where there is none.
const StateDirAuto = "auto"

// Zero is what 0 does for k: "" for a key that is no number or
// duration, else that it is off or refused.
func (k Key) Zero() string {
	switch k.Default.(type) {
	case int, int64, time.Duration:
	default:
		return ""
	}
	if k.Min == nil {
		return "off"
	}
	return fmt.Sprintf("refused: at least %v, as %s", k.Min, k.MinWhy)
}

// Env is the environment variable that sets k.
func (k Key) Env() string { return EnvPrefix + strings.ToUpper(k.Name) }

// minAdminToken is the shortest admin_token accepted, as the shortest
// read token in clear (internal/access): anything shorter is guessable.
const minAdminToken = 16

// minFrontmatterDepth is how deep the items of metadata.tags sit: a
// lower max_frontmatter_depth would refuse ordinary skills.
const minFrontmatterDepth = 3

// Keys lists every configuration key.
var Keys = []Key{
	{Name: "listen", Flag: "listen", Default: ":8080", Help: "address the HTTP server listens on"},
	{Name: "skills", Flag: "skills", Default: "./skills", Help: "skills root directory; a missing default directory means no skills, a missing configured one is an error"},
	{Name: "agents", Flag: "agents", Default: "./agents", Help: "sub-agents root directory; when the default is missing, no sub-agent source is configured (the sub-agent tree answers 404)"},
	{Name: "base_url", Flag: "base-url", Default: "", Help: "public base URL for absolute artifact URLs (e.g. https://skills.example.com); empty derives it from each request"},
	{Name: "trust_proxy", Flag: "trust-proxy", Default: false, Help: "derive the base URL from X-Forwarded-Proto and X-Forwarded-Host when base_url is empty, and count wrong tokens (auth_failures_per_minute) by the last X-Forwarded-For address; enable only behind a proxy that sets them"},
	{Name: "allowed_hosts", Flag: "allowed-hosts", Default: []string{}, Help: "when base_url is empty, the hosts (host or host:port, as clients send them in Host, or in X-Forwarded-Host with trust_proxy) documents are served for; a request naming another host gets 421 on every document route. Comma-separated in the environment and on the command line. Empty allows any valid host"},
	{Name: "document_cache_max_bytes", Flag: "document-cache-max-bytes", Default: int64(32 << 20), Help: "most bytes of documents kept for hosts that are neither base_url nor in allowed_hosts, least recently used first out; beyond it such documents are made again per request (a copy and a hash, no render)"},
	{Name: "cors_allow_origin", Flag: "cors-allow-origin", Default: "*", Help: "Access-Control-Allow-Origin sent on GET, HEAD and POST responses and preflights; empty sends none (set it empty in the file or with the flag: an empty environment variable counts as unset)"},
	{Name: "log_format", Flag: "log-format", Default: "auto", Help: "log format: auto (text on a terminal, JSON otherwise), json or text"},
	{Name: "log_level", Flag: "log-level", Default: "info", Help: "log level: debug, info, warn or error"},
	{Name: "log_buffer_bytes", Flag: "log-buffer-bytes", Default: 1 << 20, Help: "most bytes of log lines waiting for the output: lines are written by a background writer, in batches, so a request does not wait for the output; when this much is waiting (the output is slower than the logging), loggers wait for room, and no line is dropped; off, each line is written as it is logged"},
	{Name: "max_file_bytes", Flag: "max-file-bytes", Default: int64(10 << 20), Help: "largest file a skill version may hold, in bytes"},
	{Name: "max_files", Flag: "max-files", Default: 1000, Help: "most files a skill version may hold, SKILL.md included"},
	{Name: "max_total_bytes", Flag: "max-total-bytes", Default: int64(50 << 20), Help: "most bytes a skill version may hold in all"},
	{Name: "max_folder_depth", Flag: "max-folder-depth", Default: 64, Help: "most levels folders may nest below a version folder; a deeper folder is a limit error and its version is not published. A scan holds a folder open per level on each core, and max_connections off leaves room for them", Min: 1, MinWhy: "a scan holds an open file per level, so no depth is safe unbounded"},
	{Name: "max_frontmatter_bytes", Flag: "max-frontmatter-bytes", Default: 64 << 10, Help: "largest front matter block of a SKILL.md or agent-md file, both --- lines included, in bytes; checked before the YAML is parsed"},
	{Name: "max_frontmatter_keys", Flag: "max-frontmatter-keys", Default: 64, Help: "most keys of one front matter mapping: the top level, or metadata"},
	{Name: "max_list_items", Flag: "max-list-items", Default: 64, Help: "most items of one front matter list, such as metadata.tags, metadata.examples or tools; a comma-separated tags or examples string counts its parts"},
	{Name: "max_value_chars", Flag: "max-value-chars", Default: 1024, Help: "longest front matter key or string value (metadata values, list items, license), in UTF-16 code units; name, version, and description and compatibility of skills have rules of their own"},
	{Name: "max_tag_chars", Flag: "max-tag-chars", Default: 128, Help: "longest item of metadata.tags, in UTF-16 code units"},
	{Name: "max_frontmatter_depth", Flag: "max-frontmatter-depth", Default: 16, Help: "most levels front matter values may nest (the items of metadata.tags are 3 down); deeper is a limit error and the version is not published", Min: minFrontmatterDepth, MinWhy: "the items of metadata.tags and metadata.examples sit 3 levels down, and unbounded nesting costs memory with the square of the depth"},
	{Name: "max_value_problems", Flag: "max-value-problems", Default: 10, Help: "most character and length problems one file's front matter values report; one more problem counts the rest; off, every one is reported"},
	{Name: "page_size", Flag: "page-size", Default: 500, Help: "most items one page of the native /skills/v1 and /subagents/v1 trees holds; one page named all.json while everything fits", Min: 1, MinWhy: "a page holds at least one item"},
	{Name: "catalogue_page_size", Flag: "catalogue-page-size", Default: 100, Help: "most skills and sub-agents one page of the HTML catalogue (/ in a browser) lists; more are on ?page=2 and on", Min: 1, MinWhy: "a page lists at least one item"},
	{Name: "catalogue_view_max_bytes", Flag: "catalogue-view-max-bytes", Default: 1 << 20, Help: "largest file, in bytes, the HTML catalogue shows as text in its file view (/ui/skills/NAME/VERSION/files/PATH) and diffs in a version comparison (/ui/skills/NAME/VERSION/compare/OTHER); a larger one offers its download instead. Off, every text file is shown and diffed, whatever its size"},
	{Name: "server_name", Flag: "server-name", Default: "skillserver", Help: "this server's name: the title of the HTML catalogue's pages and of the A2A agent card; one lower-hyphen-case word such as team-skills"},
	{Name: "server_description", Flag: "server-description", Default: "Skill catalogue", Help: "this server's description: the line under server_name in the HTML catalogue's header, and the description of the A2A agent card; say whose catalogue it is, such as Skills of the platform team"},
	{Name: "server_logo", Flag: "server-logo", Default: "", Help: "an SVG or PNG file shown before server_name in the HTML catalogue's header, in served and exported pages; read once at start, at most 256 KiB, served from /ui/assets/ at a name holding its digest. Empty: no logo"},
	{Name: "catalog_publisher", Flag: "catalog-publisher", Default: "", Help: "the domain name the AI catalogue's urn:air identifiers are minted under (/.well-known/ai-catalog.json: urn:air:<publisher>:skills:<name>); they must stay the same on every replica and in every export, so set it to the domain the team owns, such as skills.example.com (never derived from a request or base_url, which replicas and exports may not share). Empty: <server_name>.localhost, a name no one else can hold"},
	{Name: "metrics_listen", Flag: "metrics-listen", Default: "", Help: "serve /metrics on this separate address (e.g. :9090) instead of the main listener"},
	{Name: "metrics_pprof", Flag: "metrics-pprof", Default: false, Help: "also serve Go's runtime profiles (net/http/pprof: CPU, heap, goroutines, ...) under /debug/pprof/ on metrics_listen, never on the main listener; needs metrics_listen. A CPU profile costs the server a few percent while it runs; without this key the heap profile takes no samples (its table would hold about 1.5 MiB)"},
	{Name: "metrics_max_connections", Flag: "metrics-max-connections", Default: 16, Help: "most connections open at once on metrics_listen, and never more than max_connections; at the cap a new one evicts an idle one, as on the main listener", Min: 1, MinWhy: "each connection holds an open file"},
	{Name: "provenance", Flag: "provenance", Default: true, Help: "publish the git remote URL (without credentials), HEAD commit and path of the checkout holding each root, read from its .git on every reload: in /api/v1/info, on every version's documents and in the agent card; publishedAt is then the commit's time unless a version declares metadata.published. Off for trees whose checkout should not be named (publishedAt is metadata.published, else the files' modification time)"},
	{Name: "watch", Flag: "watch", Default: true, Help: "reload when files under the roots change (recursive inotify watch, debounced)"},
	{Name: "watch_debounce", Flag: "watch-debounce", Default: 250 * time.Millisecond, Help: "quiet time after the last file event before a reload starts", Min: time.Millisecond, MinWhy: "a reload waits for some quiet after the last file event"},
	{Name: "watch_max_wait", Flag: "watch-max-wait", Default: 2 * time.Second, Help: "longest a file event waits for its reload while events keep coming (a file rewritten every 100ms never leaves watch_debounce of quiet); at least watch_debounce", Min: time.Millisecond, MinWhy: "a file event always gets its reload"},
	{Name: "reload_timeout", Flag: "reload-timeout", Default: 2 * time.Minute, Help: "abandon a reload that runs longer (a read stuck on a hung NFS or FUSE mount): it is logged and counted, the previous snapshot keeps serving and the next trigger starts a new reload. The first scan is not bounded"},
	{Name: "reload_max_abandoned", Flag: "reload-max-abandoned", Default: 4, Help: "most abandoned reloads that may still be blocked (each holds a thread and the snapshot it started from) before no new reload starts until one returns"},
	{Name: "rescan_interval", Flag: "rescan-interval", Default: time.Duration(0), Help: "also rescan everything this often, for filesystems without inotify (NFS, some volume mounts)"},
	{Name: "admin_token", Flag: "", Default: "", Help: "bearer token that enables POST /-/reload and /-/problems; at least 16 characters (make one with openssl rand -hex 24); empty disables both (404). Set it by environment or file, not on the command line"},
	{Name: "read_tokens_file", Flag: "read-tokens-file", Default: "", Help: "file of read tokens, one \"NAME SECRET PATTERN...\" per line (SECRET may be sha256:<hex>; PATTERN * is every item, and a line needs at least one; the file must end with a newline); when set every route but /healthz, /readyz and /-/reload needs one, as Authorization: Bearer or a /t/<token>/ path prefix, and a token sees only the items its patterns match. Re-read on SIGHUP and, with watch, when it changes; a file that does not read (being written, broken, deleted) keeps the tokens in force; empty: the feed is public"},
	{Name: "auth_failures_per_minute", Flag: "auth-failures-per-minute", Default: 60, Help: "most wrong tokens one client address may send a minute, and at once: admin_token on /-/reload and /-/problems, read tokens on a private feed; past them the address is held back: any token it sends, right or wrong, is answered 429 with Retry-After without being checked, until the allowance refills. A client sending the right token never spends it. The address is the connection's, or with trust_proxy the last X-Forwarded-For entry. At most 10000 addresses are remembered, the least recently failing forgotten first"},
	{Name: "state_dir", Flag: "state-dir", Default: StateDirAuto, Help: "folder for the published bytes (one read-only file per blob, named by its digest) and the scan cache, so memory holds metadata, not bytes, and a restart over an unchanged tree reads and compresses nothing again. Needs about the tree's size plus its archives and what retention keeps; one process per folder (a second is refused). \"auto\" is a folder per tree under $XDG_STATE_HOME/skillserver (else ~/.local/state/skillserver), or, where there is none or it is in use or not writable, the bytes are held in memory, logged once; \"\" holds them in memory; any other value is a folder that must be writable"},
	{Name: "blob_cache_max_bytes", Flag: "blob-cache-max-bytes", Default: int64(16 << 20), Help: "memory that keeps recently served small blobs of state_dir (each at most a sixteenth of it), least recently used first out: a small file goes out from memory in one write, faster than opened and sent with sendfile per request; larger blobs are always sent from their files"},
	{Name: "retention", Flag: "retention", Default: 10 * time.Minute, Help: "how long a pinned artifact URL keeps serving its bytes after a reload replaced them"},
	{Name: "retention_max_bytes", Flag: "retention-max-bytes", Default: int64(256 << 20), Help: "most bytes kept only for retention; the oldest go first beyond it"},
	{Name: "max_connections", Flag: "max-connections", Default: 0, Help: "most client connections open at once; at the cap a new client evicts the connection that has been idle or sending its request the longest (once it had half a second), never one being answered, and waits while there is none. Off, the server has no cap of its own but never accepts more than its open files allow: the open-file limit less what the process holds itself (32, metrics_max_connections when metrics_listen is set, and max_folder_depth + 4 per core for the scan: 168 on two cores by default), at most 4096, and at least a quarter of the limit"},
	{Name: "read_header_timeout", Flag: "read-header-timeout", Default: 5 * time.Second, Help: "how long a client may take to send a request's headers before the connection is closed", Min: time.Millisecond, MinWhy: "a client that never finishes its headers would hold its connection for ever"},
	{Name: "read_body_timeout", Flag: "read-body-timeout", Default: 30 * time.Second, Help: "how long a client may take to send a request body (check-updates, reload) once the headers are in; then the connection is closed. Responses are bounded by write_stall_timeout", Min: time.Millisecond, MinWhy: "a client that never finishes its body would hold its connection for ever"},
	{Name: "write_stall_timeout", Flag: "write-stall-timeout", Default: 30 * time.Second, Help: "how long a response may make no progress before its connection is closed: its client stopped reading, or takes in less than the kernel wakes a writer for (about a third of the socket send buffer, at most about 1.3 MiB on Linux: 45 KB/s at 30s). A download that keeps reading faster is not cut, however long it takes. The cut comes at most a sixteenth of it late (a connection moves its deadline on once per that sixteenth, not per response)"},
	{Name: "idle_timeout", Flag: "idle-timeout", Default: 60 * time.Second, Help: "how long a keep-alive connection may wait for its next request", Min: time.Millisecond, MinWhy: "an idle client would hold its connection for ever"},
	{Name: "max_header_bytes", Flag: "max-header-bytes", Default: 64 << 10, Help: "largest request line plus headers, in bytes; larger requests get 431", Min: 1 << 10, MinWhy: "a request line and its usual headers need that much"},
	{Name: "max_ranges", Flag: "max-ranges", Default: 16, Help: "most ranges one Range header may name; with more the whole body is sent (200) instead of a multipart answer"},
	{Name: "max_query_bytes", Flag: "max-query-bytes", Default: 1 << 10, Help: "longest search text (q of /api/v1/skills, /api/v1/subagents, /api/search and the HTML catalogue), in bytes after percent-decoding; a longer one is 400. A search looks up every word, so a query of tens of kilobytes costs over 50 times a short one; off, max_header_bytes still bounds it"},
	{Name: "max_search_results", Flag: "max-search-results", Default: 100, Help: "most results one search answers: a larger take of /api/v1/skills and /api/v1/subagents, or limit of /api/search, is taken as this; off, a client may ask for the whole catalogue"},
	{Name: "max_update_checks", Flag: "max-update-checks", Default: 100, Help: "most items one POST /api/v1/skills/check-updates may name; more are 400; off, max_body_bytes still bounds them"},
	{Name: "max_body_bytes", Flag: "max-body-bytes", Default: 1 << 20, Help: "largest request body read (the check-updates array), in bytes; a larger one is 400 and no more of it is read", Min: 1, MinWhy: "a body is read into memory"},
	{Name: "mcp_page_size", Flag: "mcp-page-size", Default: 1000, Help: "most skills one page of the MCP endpoint's skills/list and resources/list holds, and entries one page of resources/directory/read; more follow through nextCursor. Some hosts (Microsoft Agent Framework) read only the first page, so keep it above the catalogue's size; off, one page holds every skill"},
	{Name: "mcp_max_request_bytes", Flag: "mcp-max-request-bytes", Default: int64(64 << 10), Help: "largest request body the MCP endpoint reads, in bytes; a larger one gets a JSON-RPC error (HTTP 413) and no more of it is read", Min: int64(1), MinWhy: "a body is read into memory"},
	{Name: "mcp_max_batch", Flag: "mcp-max-batch", Default: 16, Help: "most messages one JSON-RPC batch to the MCP endpoint may hold (protocol revisions before 2025-06-18 batch; later ones are refused by the SDK); more get a JSON-RPC error (HTTP 400); off, mcp_max_request_bytes still bounds them"},
	{Name: "mcp_max_file_bytes", Flag: "mcp-max-file-bytes", Default: int64(16 << 20), Help: "largest file the MCP endpoint's resources/read returns, in bytes (MCP carries a file whole in one JSON string, base64 for binary files, so this bounds one answer's memory); a larger one gets a JSON-RPC error naming the HTTP route to fetch it from; 16 MiB is what the skills extension lets a host hold for a whole skill"},
	{Name: "shutdown_delay", Flag: "shutdown-delay", Default: time.Duration(0), Help: "on SIGINT/SIGTERM, keep serving this long with /readyz answering 503 so load balancers stop sending traffic, then drain (e.g. 5s behind Kubernetes)"},
	{Name: "shutdown_timeout", Flag: "shutdown-timeout", Default: 15 * time.Second, Help: "how long SIGINT/SIGTERM waits for in-flight requests before closing connections", Min: time.Millisecond, MinWhy: "a stuck request would hold the shutdown for ever"},
	{Name: "export_out", Flag: "out", Default: "", Help: "export: where the static export goes, a folder or a bucket URL (s3://, gs://, azblob://, file://); required by export"},
	{Name: "export_api_url", Flag: "api-url", Default: "", Help: "export: base URL of a live skillserver that answers the dynamic routes (search, read API, update check, health); the exported manifest and API catalog link them there. Empty: the export links none. The base URL itself: the same origin routes them to a server, and the documents equal serve's byte for byte"},
	{Name: "export_catalogue", Flag: "catalogue", Default: true, Help: "export: also write the HTML catalogue as static pages (index.html, /ui/...: every skill's and sub-agent's pages, file views, version comparisons, their script and icon), as serve shows them but for what needs a live server (search by query, fetch counts, clawhub and MCP lines); the index filters its list in the browser and is a plain list without JavaScript. Each page carries its Content-Security-Policy in a meta element too, and a _headers file gives the headers by path to the hosts that read one. Off: only the feeds' files"},
	{Name: "export_prune_older_than", Flag: "prune-older-than", Default: time.Duration(0), Help: "export: remove what earlier exports wrote that no current document names and no export named for this long (e.g. 168h); off, everything is kept"},
}
