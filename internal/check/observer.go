package check

import "sync"

// observer is what Run adds to the Client: it collects the warnings and
// the counts of a walk. With one set, the Client also probes each entry
// point and artifact for HEAD and compression (Client.probe).
type observer struct {
	authed   bool
	progress func(items, requests int)
	requests func() int // the requests made so far, for progress

	mu                                      sync.Mutex
	warnings                                []*Violation
	items                                   int
	skillVersions, subagents, agentVersions int
}

func (o *observer) warn(v *Violation) {
	o.mu.Lock()
	o.warnings = append(o.warnings, v)
	o.mu.Unlock()
}

func (o *observer) itemDone() {
	o.mu.Lock()
	o.items++
	n := o.items
	o.mu.Unlock()
	if o.progress != nil {
		o.progress(n, o.requests())
	}
}

func (o *observer) countVersions(skills, agents int) {
	o.mu.Lock()
	o.skillVersions += skills
	o.agentVersions += agents
	if agents > 0 {
		o.subagents++
	}
	o.mu.Unlock()
}
