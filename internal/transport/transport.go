// Package transport owns how the server's answers travel and what is
// recorded of each: the connection limits and eviction at the cap, the
// read and write deadlines, corked writes, the per-response state
// handlers and middleware share (status, bytes, header values, the route,
// the read token's name, the parsed query), request IDs, the request log
// and its encoder, metrics per route (through Observer), and serving
// pre-encoded bytes with http.ServeContent's semantics (ETag, 304,
// Range, HEAD), most of them without it.
//
// It knows nothing of what it carries: it imports no package of the
// project and no router. What a router knows (the pattern of a request
// no route answered) comes in as a func; internal/httpapi, the only
// importer of chi, builds the server on it.
package transport

import "time"

// Observer records request metrics (metrics.Metrics).
type Observer interface {
	// ForRoute returns the observer of the requests of one route
	// pattern, with what depends on the pattern alone done once.
	ForRoute(route string) RequestObserver
	// ObserveRequest records one request of a route ForRoute was not
	// asked for.
	ObserveRequest(route, method string, code int, d time.Duration)
}

// RequestObserver records one answered request of its route.
type RequestObserver = func(method string, code int, d time.Duration)

// StatusClientClosed is logged and counted for a request whose client
// went away before anything was answered (nginx's 499), so a reload the
// client gave up on is not logged as a 200.
const StatusClientClosed = 499
