package main

import (
	"net/netip"
	"sync"
	"time"
)

// inviteLimiter lets each source address start at most `perSecond` INVITEs a second
// (SIP_INVITES_PER_SECOND), a bucket per source refilled continuously: a flood from one address is
// answered 503 with `Retry-After: 1` and costs no Call, while a trunk's ordinary bursts pass.
type inviteLimiter struct {
	perSecond float64
	mu        sync.Mutex
	buckets   map[netip.Addr]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// forgetAfter: a source quiet this long starts again with a full bucket, and its entry goes.
const forgetAfter = time.Minute

func newInviteLimiter(perSecond int) *inviteLimiter {
	return &inviteLimiter{perSecond: float64(perSecond), buckets: map[netip.Addr]*bucket{}}
}

// allow takes one INVITE of `source` at `now`; false when its second's share is spent.
func (l *inviteLimiter) allow(source netip.Addr, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, known := l.buckets[source]
	if !known {
		if len(l.buckets) >= 10_000 {
			l.forgetQuiet(now)
		}
		b = &bucket{tokens: l.perSecond, at: now}
		l.buckets[source] = b
	}
	b.tokens = min(l.perSecond, b.tokens+now.Sub(b.at).Seconds()*l.perSecond)
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (l *inviteLimiter) forgetQuiet(now time.Time) {
	for source, b := range l.buckets {
		if now.Sub(b.at) > forgetAfter {
			delete(l.buckets, source)
		}
	}
}
