package main

import (
	"net/netip"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// guard runs before every SIP request the SIP side serves: a source outside SIP_TRUSTED_SOURCES
// is answered 403, an INVITE over its source's SIP_INVITES_PER_SECOND 503 with `Retry-After: 1`;
// neither reaches the gateway, so nothing is recorded. An ACK has no answer and is dropped.
func (s *sidecar) guard(next sipgo.RequestHandler) sipgo.RequestHandler {
	return func(req *sip.Request, tx sip.ServerTransaction) {
		if reason, status, phrase := s.refusal(req, time.Now()); reason != "" {
			s.refused.add(reason)
			s.log.Info("SIP request refused", "reason", reason, "method", req.Method.String(), "source", req.Source())
			if req.IsAck() {
				return
			}
			res := sip.NewResponseFromRequest(req, status, phrase, nil)
			if status == sip.StatusServiceUnavailable {
				res.AppendHeader(sip.NewHeader("Retry-After", "1"))
			}
			_ = tx.Respond(res)
			return
		}
		next(req, tx)
	}
}

// refusal says why a request is refused (and with which status), or "" when it is served.
func (s *sidecar) refusal(req *sip.Request, now time.Time) (reason string, status int, phrase string) {
	source, ok := sourceAddr(req.Source())
	if !ok || !s.trusted.allows(source) {
		return "untrusted_source", sip.StatusForbidden, "Forbidden"
	}
	if req.IsInvite() && !s.invites.allow(source, now) {
		return "rate_limited", sip.StatusServiceUnavailable, "Service Unavailable"
	}
	return "", 0, ""
}

// sourceAddr reads the IP of a request's `host:port` source.
func sourceAddr(hostPort string) (netip.Addr, bool) {
	if addrPort, err := netip.ParseAddrPort(hostPort); err == nil {
		return addrPort.Addr().Unmap(), true
	}
	addr, err := netip.ParseAddr(hostPort)
	return addr.Unmap(), err == nil
}

// methodNotAllowed answers a request of a method the SIP side does not serve (sipgo's default).
func methodNotAllowed(req *sip.Request, tx sip.ServerTransaction) {
	if req.IsAck() {
		return
	}
	_ = tx.Respond(sip.NewResponseFromRequest(req, sip.StatusMethodNotAllowed, "Method Not Allowed", nil))
}
