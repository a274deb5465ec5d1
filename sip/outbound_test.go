package main

import (
	"strings"
	"testing"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// Calls the service places, over loopback: the control API's dial, the SIP side's INVITE through
// a trunk that is a far end of the test's, the trunk's answers as carrier callbacks.

const placedCallID = "5b0e7c1e-2f4a-4d0b-8c35-7a1d9e3f6b21"

func TestDialRingsThenAnswersAndTheFarEndHangsUp(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	calls := make(chan farCall, 1)
	trunk := startFarEnd(t, nil, answering(calls))
	s := startSidecar(t, gateway, trunk, nil)

	if !s.dial(t, gateway, placedCallID, "+4755501234") {
		t.Fatal("the dial placed no call")
	}
	invite := trunk.nextRequest(t, sip.INVITE)
	if invite.user != "+4755501234" || invite.fromUser != "+4721000042" || invite.fromHost != "127.0.0.1" {
		t.Errorf("INVITE sip:%s, From %s@%s: want the number called at the trunk, from the call's number at the trunk's domain",
			invite.user, invite.fromUser, invite.fromHost)
	}
	gateway.expectCallbacks(t, placedCallID, "ringing")
	// Answered: the person's audio attaches to the call the gateway holds, with the call's own token.
	stream := gateway.nextStream(t)
	if stream.params["callId"] != placedCallID || stream.params["token"] != "call-token-"+placedCallID[:8] {
		t.Errorf("start parameters %v", stream.params)
	}
	gateway.noCallback(t) // `answered` only once the gateway took the stream
	stream.attach(placedCallID)
	gateway.expectCallbacks(t, placedCallID, "answered")
	call := nextCall(t, calls)
	eventually(t, "the call is live", func() bool { placed, answered := s.counts(); return placed == 1 && answered == 1 })

	// The person hangs up: BYE from the far end, the stream stops.
	if err := call.dialog.Hangup(t.Context()); err != nil {
		t.Fatal(err)
	}
	stream.stopped(t)
	s.idle(t)
	gateway.noCallback(t)
}

// A call id is dialled once: a retried dial finds the call placed and does not ring twice.
func TestDialOncePerCallID(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	trunk := startFarEnd(t, nil, func(d *diago.DialogServerSession) { _ = d.Respond(486, "Busy Here", nil) })
	s := startSidecar(t, gateway, trunk, nil)
	if !s.dial(t, gateway, placedCallID, "+4755501234") {
		t.Fatal("the first dial placed no call")
	}
	gateway.expectCallbacks(t, placedCallID, "busy")
	s.idle(t)
	if s.dial(t, gateway, placedCallID, "+4755501234") {
		t.Error("the same call id was dialled again")
	}
	if n := trunk.count(sip.INVITE); n != 1 {
		t.Errorf("%d INVITEs reached the trunk", n)
	}
}

// A refused dial is its carrier callback (failureCallback), and opens no stream.
func TestDialRefusalsAreTheirCallbacks(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	// The trunk answers with the status the number called ends with.
	trunk := startFarEnd(t, nil, func(d *diago.DialogServerSession) {
		status := map[string]int{"486": 486, "600": 600, "480": 480, "408": 408, "503": 503, "404": 404}[d.ToUser()[len(d.ToUser())-3:]]
		ring(d)
		_ = d.Respond(status, "", nil)
	})
	s := startSidecar(t, gateway, trunk, nil)
	cases := map[string]string{"486": "busy", "600": "busy", "480": "declined", "408": "declined", "503": "not_connected", "404": "not_connected"}
	for status, want := range cases {
		callID := strings.Replace(placedCallID, "5b0e7c1e", "5b0e7"+status, 1)
		if !s.dial(t, gateway, callID, "+4755501"+status) {
			t.Fatal("no call placed")
		}
		gateway.expectCallbacks(t, callID, "ringing", want)
	}
	s.idle(t)
	gateway.noStream(t)
}

// The call workflow releases a call that rings: CANCEL, and no callback after `ringing` (the
// workflow knows why it ended).
func TestReleaseWhileRingingCancels(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	canceled := make(chan struct{})
	trunk := startFarEnd(t, nil, func(d *diago.DialogServerSession) {
		_ = d.Ringing()
		<-d.Context().Done() // the CANCEL ends it; nothing else would for a minute
		close(canceled)
	})
	s := startSidecar(t, gateway, trunk, nil)
	s.dial(t, gateway, placedCallID, "+4755501234")
	gateway.expectCallbacks(t, placedCallID, "ringing")
	s.post(t, "/calls/"+placedCallID+"/release", map[string]any{"reason": "cancel"})
	waitClosed(t, canceled, "the ringing call was not canceled at the trunk")
	s.idle(t)
	gateway.noCallback(t)
	gateway.noStream(t)
}

// The call workflow releases an answered call: BYE from our side.
func TestReleaseAnsweredSendsBye(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	calls := make(chan farCall, 1)
	trunk := startFarEnd(t, nil, answering(calls))
	s := startSidecar(t, gateway, trunk, nil)
	s.dial(t, gateway, placedCallID, "+4755501234")
	stream := gateway.nextStream(t)
	stream.attach(placedCallID)
	gateway.expectCallbacks(t, placedCallID, "ringing", "answered")
	call := nextCall(t, calls)
	s.post(t, "/calls/"+placedCallID+"/release", map[string]any{"reason": "hang_up"})
	trunk.nextRequest(t, sip.BYE)
	call.ended(t, "BYE on release")
	stream.stopped(t)
	s.idle(t)
}

// A trunk that asks for digest credentials gets them (SIP_USERNAME, SIP_PASSWORD); wrong ones
// are not_connected.
func TestDialDigestCredentials(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	auth := diago.NewDigestServer()
	t.Cleanup(auth.Close)
	calls := make(chan farCall, 1)
	trunk := startFarEnd(t, nil, func(d *diago.DialogServerSession) {
		// The challenge, or a refusal of wrong credentials (diago's AuthorizeDialog sends no answer then).
		res, _ := auth.AuthorizeRequest(d.InviteRequest, diago.DigestAuth{Username: "trunk-user", Password: "trunk-pass", Realm: "trunk.test"})
		if res.StatusCode != sip.StatusOK {
			_ = d.WriteResponse(res)
			return
		}
		answering(calls)(d)
	})
	right := startSidecar(t, gateway, trunk, func(c *config) { c.username, c.password = "trunk-user", "trunk-pass" })
	right.dial(t, gateway, placedCallID, "+4755501234")
	if first := trunk.nextRequest(t, sip.INVITE); first.authorization != "" {
		t.Errorf("credentials before the challenge: %s", first.authorization)
	}
	second := trunk.nextRequest(t, sip.INVITE)
	if !strings.Contains(second.authorization, `username="trunk-user"`) || !strings.Contains(second.authorization, `realm="trunk.test"`) {
		t.Errorf("the INVITE after the challenge: Authorization %q", second.authorization)
	}
	gateway.nextStream(t).attach(placedCallID)
	gateway.expectCallbacks(t, placedCallID, "ringing", "answered")
	_ = nextCall(t, calls).dialog.Hangup(t.Context())
	right.idle(t)

	wrong := startSidecar(t, gateway, trunk, func(c *config) { c.username, c.password = "trunk-user", "guess" })
	otherCallID := strings.Replace(placedCallID, "5b0e7c1e", "5b0e7c1f", 1)
	wrong.dial(t, gateway, otherCallID, "+4755501234")
	trunk.nextRequest(t, sip.INVITE)
	if retry := trunk.nextRequest(t, sip.INVITE); !strings.Contains(retry.authorization, `username="trunk-user"`) {
		t.Errorf("wrong credentials were not tried: Authorization %q", retry.authorization)
	}
	gateway.expectCallbacks(t, otherCallID, "not_connected")
	wrong.idle(t)
	gateway.noStream(t)
}
