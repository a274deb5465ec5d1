package main

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/emiago/sipgo/sip"
	"github.com/emiago/sipgo/siptest"
)

// The guard as wired into the SIP side (newSidecar): every request, of any method, passes it.

// sendTo sends a hand-made request of `method` for `user` at the SIP side; its final answer.
func sendTo(t *testing.T, s *testSidecar, method sip.RequestMethod, user string) *sip.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req := sip.NewRequest(method, s.uri(user))
	req.AppendHeader(&sip.ContactHeader{Address: sip.Uri{User: "far", Host: "127.0.0.1", Port: 5999}})
	res, err := rawClient(t).Do(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res
}

func TestGuardOverTheWire(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	// Loopback is not among the trusted sources: our own requests are strangers'.
	stranger := startSidecar(t, gateway, nil, func(c *config) {
		c.trusted = trustedSources{netip.MustParsePrefix("192.0.2.0/24")}
	})
	for _, method := range []sip.RequestMethod{sip.INVITE, sip.OPTIONS, sip.MESSAGE} {
		if res := sendTo(t, stranger, method, "+4721000042"); res.StatusCode != 403 {
			t.Errorf("a stranger's %s: %d, want 403", method, res.StatusCode)
		}
	}
	gateway.noStream(t)
	var metrics strings.Builder
	stranger.refused.writeMetrics(&metrics)
	if !strings.Contains(metrics.String(), `sip_requests_refused_total{reason="untrusted_source"} 3`) {
		t.Errorf("metrics:\n%s", metrics.String())
	}

	// Trusted, one INVITE a second: the second at once is 503 Retry-After 1; other methods pass.
	limited := startSidecar(t, gateway, nil, func(c *config) { c.invitesPerSecond = 1 })
	if res := sendTo(t, limited, sip.INVITE, "reception"); res.StatusCode != 480 {
		t.Errorf("the first INVITE: %d, want 480 (served: not a number)", res.StatusCode)
	}
	res := sendTo(t, limited, sip.INVITE, "reception")
	if retry := res.GetHeader("Retry-After"); res.StatusCode != 503 || retry == nil || retry.Value() != "1" {
		t.Errorf("the second INVITE: %d Retry-After %v, want 503 Retry-After 1", res.StatusCode, retry)
	}
	if res := sendTo(t, limited, sip.OPTIONS, ""); res.StatusCode != 200 {
		t.Errorf("OPTIONS: %d, want 200", res.StatusCode)
	}
	if res := sendTo(t, limited, sip.MESSAGE, "+4721000042"); res.StatusCode != 405 {
		t.Errorf("MESSAGE, served by nobody: %d, want 405", res.StatusCode)
	}
}

// A refused ACK gets no answer (there is none to an ACK); a refused INVITE's answer is the
// guard's own, and the handler behind it is not run.
func TestGuardAnswersThroughTheTransaction(t *testing.T) {
	s := guardedSidecar(trustedSources{netip.MustParsePrefix("192.0.2.0/24")}, 1)
	served := 0
	handler := s.guard(func(*sip.Request, sip.ServerTransaction) { served++ })

	ack := wholeRequest(sip.ACK, "203.0.113.9:5060")
	ackTx := siptest.NewServerTxRecorder(ack)
	defer ackTx.Terminate()
	handler(ack, ackTx)
	if n := len(ackTx.Result()); n != 0 {
		t.Errorf("a refused ACK was answered %d times", n)
	}

	for _, want := range []int{0, 503} { // served, then over the rate
		invite := wholeRequest(sip.INVITE, "192.0.2.7:5060")
		tx := siptest.NewServerTxRecorder(invite)
		handler(invite, tx)
		results := tx.Result()
		tx.Terminate()
		switch {
		case want == 0 && len(results) != 0:
			t.Errorf("a served INVITE was answered by the guard: %v", results)
		case want != 0 && (len(results) != 1 || results[0].StatusCode != want):
			t.Errorf("want %d, answered %v", want, results)
		case want == 503 && results[0].GetHeader("Retry-After") == nil:
			t.Error("503 without Retry-After")
		}
	}
	if served != 1 {
		t.Errorf("the handler ran %d times, want once (the INVITE within its rate)", served)
	}
}

// wholeRequest is a request with the headers a transaction needs, from `source`.
func wholeRequest(method sip.RequestMethod, source string) *sip.Request {
	req := request(method, source)
	via := &sip.ViaHeader{ProtocolName: "SIP", ProtocolVersion: "2.0", Transport: "UDP", Host: "192.0.2.7", Port: 5060, Params: sip.NewParams()}
	via.Params.Add("branch", sip.GenerateBranch())
	callID := sip.CallIDHeader(sip.GenerateTagN(12))
	from := &sip.FromHeader{Address: sip.Uri{User: "caller", Host: "192.0.2.7"}, Params: sip.NewParams()}
	from.Params.Add("tag", sip.GenerateTagN(8))
	req.AppendHeader(via)
	req.AppendHeader(from)
	req.AppendHeader(&sip.ToHeader{Address: req.Recipient, Params: sip.NewParams()})
	req.AppendHeader(&callID)
	req.AppendHeader(&sip.CSeqHeader{SeqNo: 1, MethodName: method})
	return req
}
