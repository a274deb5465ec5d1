package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// Transfers over loopback (transfer.go, bridge.go, finish.go): the gateway sends the typed
// `transfer` event with an E.164 target and keeps the stream open; the far end is sent a blind
// REFER to the target through the trunk, and when it refuses, the SIP side calls the target itself
// and bridges the two legs. Either way the outcome is reported to the gateway before anything else
// (`transfer_connected`, or `transfer_failed` with why, and then the call goes on). Only that event
// transfers: a close reason naming a target, or a target that is not E.164, is not a transfer.

const transferTarget = "+4755500000"

// referTo is the Refer-To a transfer to transferTarget names: the target through the trunk.
func referTo(trunk *farEnd) string {
	return fmt.Sprintf("sip:%s@127.0.0.1:%d", transferTarget, trunk.port)
}

// A far end that takes the REFER calls the target; its NOTIFY says the target answered: the
// gateway is told transfer_connected, then the stream is closed and the caller gets the BYE.
func TestTransferByReferTaken(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	targets := make(chan farCall, 1)
	target := startFarEnd(t, nil, answering(targets))
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, nil, nil)
	caller.takesRefer = true
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)
	if stream.params["transfer"] != "report" {
		t.Errorf("start's customParameters %v, want transfer: report", stream.params)
	}

	stream.transferTo(transferTarget)
	if refer := caller.nextRequest(t, sip.REFER); !strings.Contains(refer.referTo, referTo(target)) {
		t.Errorf("Refer-To %q, want %s", refer.referTo, referTo(target))
	}
	nextCall(t, targets) // the caller's phone called the target, which answered
	gateway.expectTransferReport(t, gatewayCallID, "")
	if _, open := stream.nextEvent(t, "stop"); !open {
		t.Error("the stream closed without a stop")
	}
	caller.nextRequest(t, sip.BYE)
	call.ended(t, "BYE once the target answered")
	s.idle(t)
	if n := target.count(sip.INVITE); n != 1 {
		t.Errorf("the target got %d INVITEs, want the caller's one (none from the SIP side)", n)
	}
	gateway.noCallback(t)
}

// The REFER is taken, but the target is busy (the final NOTIFY says 486): transfer_failed busy,
// and the call goes on: the caller still hears the agent, and is hung up only when the agent ends.
func TestTransferByReferTargetBusyGoesOn(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	target := startFarEnd(t, nil, func(d *diago.DialogServerSession) { _ = d.Respond(486, "Busy Here", nil) })
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, nil, nil)
	caller.takesRefer = true
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.transferTo(transferTarget)
	caller.nextRequest(t, sip.REFER)
	gateway.expectTransferReport(t, gatewayCallID, "busy")
	stream.media(frame(0x55))
	call.hears(t, "the agent after the failed transfer", isFrameOf(0x55))
	if n := caller.count(sip.BYE); n != 0 {
		t.Fatalf("the caller was hung up (%d BYEs)", n)
	}
	stream.closeWith("")
	call.ended(t, "BYE once the agent hung up")
	s.idle(t)
	gateway.noCallback(t)
}

// A placed call's far end is the trunk, which takes the REFER: the same, from the dialog we made.
func TestPlacedCallTransferByRefer(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	calls := make(chan farCall, 2)
	trunk := startFarEnd(t, nil, func(d *diago.DialogServerSession) {
		ring(d)
		med, err := d.Answer(diago.AnswerOptions{OnRefer: callReferred})
		if err != nil {
			return
		}
		calls <- farCall{dialog: d, media: med}
		<-d.Context().Done()
	})
	s := startSidecar(t, gateway, trunk, nil)
	s.dial(t, gateway, placedCallID, "+4755501234")
	stream := gateway.nextStream(t)
	stream.attach(placedCallID)
	gateway.expectCallbacks(t, placedCallID, "ringing", "answered")
	eventually(t, "the call is live", func() bool { _, answered := s.counts(); return answered == 1 })

	stream.transferTo(transferTarget)
	if refer := trunk.nextRequest(t, sip.REFER); !strings.Contains(refer.referTo, referTo(trunk)) {
		t.Errorf("Refer-To %q, want %s", refer.referTo, referTo(trunk))
	}
	gateway.expectTransferReport(t, placedCallID, "")
	trunk.nextRequest(t, sip.BYE)
	s.idle(t)
}

// The far end refuses the REFER: the SIP side calls the target (from the number the person
// called), reports it connected once it answers, and bridges the two legs' audio until the target
// hangs up, then hangs up the caller and tells the gateway how long the bridge lasted.
func TestTransferReferRefusedIsBridged(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	targets := make(chan farCall, 1)
	target := startFarEnd(t, nil, answering(targets))
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, nil, nil) // diago refuses a REFER it was given no handler for
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.transferTo(transferTarget)
	caller.nextRequest(t, sip.REFER)
	invite := target.nextRequest(t, sip.INVITE)
	if invite.user != transferTarget || invite.fromUser != "+4721000042" {
		t.Errorf("the target's INVITE: sip:%s from %s, want sip:%s from the number called", invite.user, invite.fromUser, transferTarget)
	}
	bridged := nextCall(t, targets)
	answeredAt := time.Now()
	gateway.expectTransferReport(t, gatewayCallID, "")

	// Each hears the other.
	call.speaks(t, repeated(frame(0x61), 50)...)
	bridged.hears(t, "the caller", isFrameOf(0x61))
	bridged.speaks(t, repeated(frame(0x62), 50)...)
	call.hears(t, "the target", isFrameOf(0x62))

	// The target hangs up: the caller gets a BYE, the gateway the bridge's length.
	time.Sleep(100 * time.Millisecond)
	if err := bridged.dialog.Hangup(t.Context()); err != nil {
		t.Fatal(err)
	}
	call.ended(t, "BYE once the target hung up")
	callback := gateway.nextCallback(t)
	lasted := time.Since(answeredAt) // a little more than the bridge: it was counted before it was sent
	seconds, _ := callback.body["seconds"].(float64)
	if callback.callID != gatewayCallID || callback.body["type"] != "transfer_ended" || seconds < 0.1 || seconds > lasted.Seconds()+0.1 {
		t.Errorf("callback %s %v, want transfer_ended of about %.2f s for %s", callback.callID, callback.body, lasted.Seconds(), gatewayCallID)
	}
	s.idle(t)
}

// A bridged transfer lasts TRANSFER_MAX_MINUTES at most: then both legs get a BYE.
func TestBridgedTransferIsBounded(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	targets := make(chan farCall, 1)
	target := startFarEnd(t, nil, answering(targets))
	const limit = 300 * time.Millisecond
	s := startSidecar(t, gateway, target, func(c *config) { c.transferMax = limit })
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.transferTo(transferTarget)
	bridged := nextCall(t, targets)
	gateway.expectTransferReport(t, gatewayCallID, "")
	bridged.ended(t, "the target's BYE at the limit")
	call.ended(t, "the caller's BYE at the limit")
	callback := gateway.nextCallback(t)
	if seconds, _ := callback.body["seconds"].(float64); callback.body["type"] != "transfer_ended" || seconds < limit.Seconds() || seconds > limit.Seconds()+1 {
		t.Errorf("callback %v, want transfer_ended of about %v", callback.body, limit)
	}
	s.idle(t)
}

// A target the SIP side dials that does not take the call (busy): transfer_failed busy, nothing
// bridged, and the call goes on with the agent.
func TestBridgedTransferTargetBusyGoesOn(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	target := startFarEnd(t, nil, func(d *diago.DialogServerSession) { _ = d.Respond(486, "Busy Here", nil) })
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.transferTo(transferTarget)
	caller.nextRequest(t, sip.REFER)
	target.nextRequest(t, sip.INVITE)
	gateway.expectTransferReport(t, gatewayCallID, "busy")
	agentGoesOnThenHangsUp(t, s, gateway, call, stream, "the agent after the failed transfer")
}

// agentGoesOnThenHangsUp: the caller hears the agent again (`what`), the agent hangs up, the
// caller gets a BYE and the gateway nothing more.
func agentGoesOnThenHangsUp(t *testing.T, s *testSidecar, gateway *fakeGateway, call farCall, stream *gatewayStream, what string) {
	t.Helper()
	stream.media(frame(0x56))
	call.hears(t, what, isFrameOf(0x56))
	stream.closeWith("")
	call.ended(t, "BYE once the agent hung up")
	s.idle(t)
	gateway.noCallback(t)
}

// A close reason that names a target, without the typed event, is a plain hang-up: no REFER, no
// call to the target.
func TestCloseReasonAloneDoesNotTransfer(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	target := startFarEnd(t, nil, answering(make(chan farCall, 1)))
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.closeWith("transferred to " + transferTarget)
	call.ended(t, "BYE after the close")
	s.idle(t)
	if n := caller.count(sip.REFER); n != 0 {
		t.Errorf("the caller was sent %d REFERs", n)
	}
	if n := target.count(sip.INVITE); n != 0 {
		t.Errorf("the target was called %d times", n)
	}
	gateway.noCallback(t)
}

// A `transfer` event whose target is not E.164 (a SIP URI, a number without its +, an extension)
// is refused (transfer_failed refused): nothing is dialled, and the call goes on until the agent ends it.
func TestTransferToANonE164TargetIsRefused(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"sip:someone@evil.example", "4755500000", "+47 555 00000", "1001", ""} {
		t.Run(bad, func(t *testing.T) {
			t.Parallel()
			gateway := newFakeGateway(t)
			target := startFarEnd(t, nil, answering(make(chan farCall, 1)))
			s := startSidecar(t, gateway, target, nil)
			caller := startFarEnd(t, nil, nil)
			caller.referStatus.Store(sip.StatusAccepted)
			call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

			stream.transferTo(bad)
			gateway.expectTransferReport(t, gatewayCallID, "refused")
			stream.closeWith("")
			call.ended(t, "BYE once the agent hung up")
			s.idle(t)
			if n := caller.count(sip.REFER); n != 0 {
				t.Errorf("the caller was sent %d REFERs", n)
			}
			if n := target.count(sip.INVITE); n != 0 {
				t.Errorf("the target was called %d times", n)
			}
			gateway.noCallback(t)
		})
	}
}
