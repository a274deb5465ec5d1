package main

import (
	"fmt"
	"io"
	"slices"
	"sync"
)

// refusalCounts counts the SIP requests refused before anything was recorded, by reason
// (`untrusted_source`, `rate_limited`), exported on the control API's /metrics as
// `sip_requests_refused_total{reason}`.
type refusalCounts struct {
	mu     sync.Mutex
	counts map[string]uint64
}

func (r *refusalCounts) add(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]uint64{}
	}
	r.counts[reason]++
}

// writeMetrics writes the counter in Prometheus' text format; both reasons appear from the start.
func (r *refusalCounts) writeMetrics(w io.Writer) {
	r.mu.Lock()
	counts := map[string]uint64{"untrusted_source": 0, "rate_limited": 0}
	for reason, n := range r.counts {
		counts[reason] = n
	}
	r.mu.Unlock()
	reasons := make([]string, 0, len(counts))
	for reason := range counts {
		reasons = append(reasons, reason)
	}
	slices.Sort(reasons)
	fmt.Fprintln(w, "# HELP sip_requests_refused_total SIP requests refused before anything was recorded, by reason.")
	fmt.Fprintln(w, "# TYPE sip_requests_refused_total counter")
	for _, reason := range reasons {
		fmt.Fprintf(w, "sip_requests_refused_total{reason=%q} %d\n", reason, counts[reason])
	}
}
