// Package metrics owns every Prometheus metric skillserver exports, in a
// private registry (never the global default one). Other packages report
// through its methods and never name a metric themselves.
//
// It takes plain values (Reload, Published, Retained), which the wiring
// in cmd/skillserver fills from the catalogue's reload event, and the
// word of each item kind from internal/item; it must not import
// internal/catalog, internal/httpapi, internal/transport, internal/feed or
// internal/scan.
package metrics

import (
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

const namespace = "skillserver"

// Metrics is the server's registry and its metrics.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
	httpPanics      prometheus.Counter
	authRefusals    *prometheus.CounterVec
	reloads         *prometheus.CounterVec
	reloadSeconds   prometheus.Histogram
	reloadLastOK    prometheus.Gauge
	reloadsRunning  prometheus.Gauge
	reloadAbandoned prometheus.Counter
	generation      prometheus.Gauge
	skills          prometheus.Gauge
	agents          prometheus.Gauge
	versions        *prometheus.GaugeVec
	bytes           prometheus.Gauge
	content         *prometheus.GaugeVec
	problems        *prometheus.GaugeVec
	retainedBytes   prometheus.Gauge
	retainedItems   prometheus.Gauge
	retainEvicted   prometheus.Counter
	evictedSeen     int64 // retention's cumulative count when last observed
	connsEvicted    prometheus.Counter
	transferEncoded prometheus.Counter
	mcpRequests     *prometheus.CounterVec
	blobFaults      *prometheus.CounterVec
}

// Build labels skillserver_build_info, and gives the counters read from
// elsewhere.
type Build struct {
	Version, Commit, GoVersion string
	// KernelBytes, if set, counts the bytes sent by sendfile
	// (transport.KernelBytes).
	KernelBytes func() int64
}

// New registers every metric, plus the Go and process collectors, in a
// new registry.
func New(b Build) *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{
		reg: reg,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method.",
			Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		httpPanics: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_panics_total",
			Help: "Handler panics recovered into a 500 response.",
		}),
		authRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_auth_refusals_total",
			Help: "Requests of a private feed refused for their read token, by reason: missing (401), unknown (403) or throttled (429: an address past auth_failures_per_minute, whose token is not checked).",
		}, []string{"reason"}),
		connsEvicted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_connections_evicted_total",
			Help: "Connections closed at max_connections to make room for a new one: idle ones, or ones still sending their request.",
		}),
		transferEncoded: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_transfer_encoded_requests_total",
			Help: "Requests framed by Transfer-Encoding; the connection of each is closed after its answer (RFC 9112 section 6.1).",
		}),
		mcpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "mcp_requests_total",
			Help: "JSON-RPC messages to the MCP endpoint, by method (the methods it serves, else other) and result: ok, error, or unserved for a method it does not serve.",
		}, []string{"method", "result"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "reload_total",
			Help: "Reload attempts, by result (success or failure). A failure keeps the previous snapshot.",
		}, []string{"result"}),
		reloadSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "reload_duration_seconds",
			Help:    "Time to scan the tree and publish a snapshot.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}),
		reloadLastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "reload_last_success_timestamp_seconds",
			Help: "Unix time the last successful reload published its snapshot (0 before the first).",
		}),
		reloadsRunning: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "reloads_in_progress",
			Help: "Reloads started and not yet returned, abandoned ones still blocked included; 0 or 1 when healthy.",
		}),
		reloadAbandoned: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "reload_abandoned_total",
			Help: "Reloads abandoned after running longer than reload_timeout; the previous snapshot kept serving.",
		}),
		generation: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "snapshot_generation",
			Help: "Generation of the published snapshot; it increases with every successful reload.",
		}),
		skills: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "snapshot_skills", Help: "Skills in the published snapshot.",
		}),
		agents: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "snapshot_agents", Help: "Sub-agents in the published snapshot.",
		}),
		versions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "snapshot_versions",
			Help: "Versions in the published snapshot, by kind (skill or subagent).",
		}, []string{"kind"}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "snapshot_bytes",
			Help: "Bytes of the distinct blobs the published snapshot's content store holds. After reloads of a few entries it also holds what they replaced, until the store is rebuilt whole; it depends on reload history, so replicas serving the same tree can differ here.",
		}),
		content: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "snapshot_content_info",
			Help: "1, labelled with the fingerprint of what the published snapshot serves (every skill and sub-agent version with its artifact digest). Replicas serving the same tree have the same fingerprint, whatever their reload history.",
		}, []string{"fingerprint"}),
		problems: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "scan_problems",
			Help: "Problems the last successful scan reported, by severity (error or warning). Errors keep items out, or keep them at their last good version.",
		}, []string{"severity"}),
		retainedBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "retained_bytes",
			Help: "Bytes held only so pinned URLs of replaced artifacts keep working for the retention window.",
		}),
		retainedItems: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "retained_artifacts",
			Help: "Replaced artifacts whose pinned URLs still answer.",
		}),
		retainEvicted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "retained_evicted_total",
			Help: "Replaced artifacts dropped before their retention window ended, to stay under retention_max_bytes.",
		}),
	}
	f(m.httpRequests)
	f(m.httpDuration)
	f(m.httpPanics)
	f(m.authRefusals)
	f(m.connsEvicted)
	f(m.transferEncoded)
	f(m.mcpRequests)
	f(m.reloads)
	f(m.reloadSeconds)
	f(m.reloadLastOK)
	f(m.reloadsRunning)
	f(m.reloadAbandoned)
	f(m.generation)
	f(m.skills)
	f(m.agents)
	f(m.versions)
	f(m.bytes)
	f(m.content)
	f(m.problems)
	f(m.retainedBytes)
	f(m.retainedItems)
	f(m.retainEvicted)
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "Always 1; the labels say which build is running.",
	}, []string{"version", "commit", "goversion"})
	goVersion := b.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	info.WithLabelValues(b.Version, b.Commit, goVersion).Set(1)
	f(info)
	m.blobFaults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "state_blob_faults_total",
		Help: "Faults of the blobs in state_dir, by kind: write (a blob could not be written, and is held in memory), corrupt (a blob did not match its digest: removed, answered 500, and written again by the next reload) or read (a blob vanished from the folder).",
	}, []string{"kind"})
	for _, k := range []string{"write", "corrupt", "read"} {
		m.blobFaults.WithLabelValues(k)
	}
	f(m.blobFaults)
	f(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_sendfile_bytes_total",
		Help: "Response bytes the kernel sent from a file in state_dir (sendfile) without their passing through the process.",
	}, func() float64 {
		if b.KernelBytes == nil {
			return 0
		}
		return float64(b.KernelBytes())
	}))
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range []string{"success", "failure"} {
		m.reloads.WithLabelValues(r) // export zeros, so alerts see the series from the start
	}
	for _, s := range []string{string(skill.SeverityError), string(skill.SeverityWarning)} {
		m.problems.WithLabelValues(s)
	}
	return m
}

// Handler serves the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Registry is the private registry, for tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest records one answered request. route must be a route
// pattern, never a raw path. Method and code are folded into fixed sets,
// since any token is a valid method: a label value per invented one would
// grow the series without bound.
func (m *Metrics) ObserveRequest(route, method string, code int, d time.Duration) {
	method = methodLabel(method)
	m.httpRequests.WithLabelValues(route, method, codeLabel(code)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// ForRoute returns the observer of one route pattern's requests: the
// same series as ObserveRequest, with the route label bound once and
// each (method, code) series looked up once, so a request costs two
// atomic loads and the observations.
func (m *Metrics) ForRoute(route string) func(method string, code int, d time.Duration) {
	labels := prometheus.Labels{"route": route}
	counters := m.httpRequests.MustCurryWith(labels)
	durations := m.httpDuration.MustCurryWith(labels)
	var byMethod [len(methodLabels)]atomic.Pointer[prometheus.Observer]
	var byCode sync.Map // methodIndex*codeKeys + codeKey -> prometheus.Counter
	return func(method string, code int, d time.Duration) {
		i := methodIndex(method)
		obs := byMethod[i].Load()
		if obs == nil {
			o := durations.WithLabelValues(methodLabels[i])
			obs = &o
			byMethod[i].Store(obs)
		}
		(*obs).Observe(d.Seconds())
		key := i*codeKeys + codeKey(code)
		c, ok := byCode.Load(key)
		if !ok {
			c, _ = byCode.LoadOrStore(key, counters.WithLabelValues(methodLabels[i], codeLabel(code)))
		}
		c.(prometheus.Counter).Inc()
	}
}

// methodLabels are the method label's values: RFC 9110's methods, then
// "other".
var methodLabels = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace, "other"}

// methodIndex is method's index in methodLabels.
func methodIndex(method string) int {
	for i, m := range methodLabels[:len(methodLabels)-1] {
		if m == method {
			return i
		}
	}
	return len(methodLabels) - 1
}

// methodLabel is method if RFC 9110 defines it, else "other".
func methodLabel(method string) string { return methodLabels[methodIndex(method)] }

// codeKeys bounds the status codes ForRoute caches a series for: codes
// 0-999 each, all others as one (they share codeLabel's "other").
const codeKeys = 1001

func codeKey(code int) int {
	if code < 0 || code >= codeKeys-1 {
		return codeKeys - 1
	}
	return code
}

// codeLabel is code if net/http knows it (or it is the 499 logged when a
// client went away before the answer), else its class ("5xx"), else
// "other".
func codeLabel(code int) string {
	switch {
	case http.StatusText(code) != "" || code == 499:
		return strconv.Itoa(code)
	case code >= 100 && code <= 599:
		return strconv.Itoa(code/100) + "xx"
	}
	return "other"
}

// ObserveEviction records a connection closed to make room at the
// connection cap.
func (m *Metrics) ObserveEviction() { m.connsEvicted.Inc() }

// ObserveTransferEncoded records a request framed by Transfer-Encoding,
// whose connection was closed after its answer.
func (m *Metrics) ObserveTransferEncoded() { m.transferEncoded.Inc() }

// ObserveBlobFault records a fault of a blob in state_dir (its kind:
// write, corrupt or read).
func (m *Metrics) ObserveBlobFault(kind string) { m.blobFaults.WithLabelValues(kind).Inc() }

// ObservePanic records a recovered handler panic.
func (m *Metrics) ObservePanic() { m.httpPanics.Inc() }

// ObserveMCP records one JSON-RPC message to the MCP endpoint. Its caller
// (internal/mcpapi) names the method from a fixed set, so clients cannot
// grow the labels.
func (m *Metrics) ObserveMCP(method, result string) {
	m.mcpRequests.WithLabelValues(method, result).Inc()
}

// Reasons a read token is refused: the label set of
// skillserver_http_auth_refusals_total, fixed so clients cannot grow it.
// "probe" is a tokenless look at a discovery index at the host's root,
// which the skills CLI sends beside every path-token install.
var refusalReasons = []string{"missing", "probe", "unknown", "throttled"}

// ObserveRefusal records a request refused for its read token; reason
// is one of refusalReasons, anything else counts as "unknown".
func (m *Metrics) ObserveRefusal(reason string) {
	if !slices.Contains(refusalReasons, reason) {
		reason = "unknown"
	}
	m.authRefusals.WithLabelValues(reason).Inc()
}

// Reload is one reload attempt, as the metrics record it.
type Reload struct {
	Duration time.Duration
	// Published is what the reload published; nil when it failed and the
	// previous snapshot stays.
	Published *Published
	// Retained is what retention holds after it.
	Retained Retained
}

// Published is the figures of a published snapshot.
type Published struct {
	Generation                   uint64
	Skills, Agents               int
	SkillVersions, AgentVersions int
	Errors, Warnings             int
	Bytes                        int64  // what the content store holds
	Fingerprint                  string // what the snapshot serves, the same on every replica serving the same tree
}

// Retained is what retention holds so pinned URLs of replaced bytes keep
// answering.
type Retained struct {
	Artifacts int
	Bytes     int64
	// Evicted counts, since the start, blobs dropped before their window
	// ended to stay under the byte bound.
	Evicted int64
}

// ObserveReload records a reload attempt and, on success, the published
// snapshot.
func (m *Metrics) ObserveReload(res Reload) {
	m.reloadSeconds.Observe(res.Duration.Seconds())
	m.ObserveRetention(res.Retained)
	c := res.Published
	if c == nil {
		m.reloads.WithLabelValues("failure").Inc()
		return
	}
	m.reloads.WithLabelValues("success").Inc()
	m.reloadLastOK.SetToCurrentTime()
	m.generation.Set(float64(c.Generation))
	m.skills.Set(float64(c.Skills))
	m.agents.Set(float64(c.Agents))
	m.versions.WithLabelValues(item.KindSkill.String()).Set(float64(c.SkillVersions))
	m.versions.WithLabelValues(item.KindSubagent.String()).Set(float64(c.AgentVersions))
	m.bytes.Set(float64(c.Bytes))
	m.content.Reset()
	m.content.WithLabelValues(c.Fingerprint).Set(1)
	m.problems.WithLabelValues(string(skill.SeverityError)).Set(float64(c.Errors))
	m.problems.WithLabelValues(string(skill.SeverityWarning)).Set(float64(c.Warnings))
}

// ObserveRetention records what retention holds: at a reload, and when
// retention's window ends for something between reloads. The catalog
// makes these calls and ObserveReload's one at a time.
func (m *Metrics) ObserveRetention(st Retained) {
	m.retainedBytes.Set(float64(st.Bytes))
	m.retainedItems.Set(float64(st.Artifacts))
	if d := st.Evicted - m.evictedSeen; d > 0 {
		m.retainEvicted.Add(float64(d))
		m.evictedSeen = st.Evicted
	}
}

// ObserveReloadsInProgress records how many reloads have started and not
// returned (internal/reload).
func (m *Metrics) ObserveReloadsInProgress(n int) { m.reloadsRunning.Set(float64(n)) }

// ObserveReloadAbandoned records a reload given up on at reload_timeout.
func (m *Metrics) ObserveReloadAbandoned() { m.reloadAbandoned.Inc() }
