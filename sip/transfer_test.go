package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// Transfers over loopback (finish.go, transfer.go): the gateway sends the typed `transfer` event
// with an E.164 target, then closes the stream; the far end is sent a blind REFER to the target
// through the trunk, and when it refuses, the SIP side calls the target itself and bridges the two
// legs. Only that event transfers: a close reason naming a target, or a target that is not E.164,
// is a plain hang-up.

const transferTarget = "+4755500000"

// referTo is the Refer-To a transfer to transferTarget names: the target through the trunk.
func referTo(trunk *farEnd) string {
	return fmt.Sprintf("sip:%s@127.0.0.1:%d", transferTarget, trunk.port)
}

func TestTransferByReferTaken(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	target := startFarEnd(t, nil, answering(make(chan farCall, 1)))
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, nil, nil)
	caller.referStatus.Store(sip.StatusAccepted)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.transferTo(transferTarget)
	if refer := caller.nextRequest(t, sip.REFER); !strings.Contains(refer.referTo, referTo(target)) {
		t.Errorf("Refer-To %q, want %s", refer.referTo, referTo(target))
	}
	caller.nextRequest(t, sip.BYE) // a REFER taken: the far end calls the target, we hang up
	call.ended(t, "BYE after the REFER")
	s.idle(t)
	if n := target.count(sip.INVITE); n != 0 {
		t.Errorf("the target was called %d times by the SIP side too", n)
	}
	gateway.noCallback(t)
}

// A placed call's far end is the trunk, which takes the REFER: the same, from the dialog we made.
func TestPlacedCallTransferByRefer(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	trunk := startFarEnd(t, nil, answering(make(chan farCall, 1)))
	trunk.referStatus.Store(sip.StatusAccepted)
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
	trunk.nextRequest(t, sip.BYE)
	s.idle(t)
	if n := trunk.count(sip.INVITE); n != 0 {
		t.Errorf("%d more INVITEs reached the trunk", n)
	}
}

// The far end refuses the REFER: the SIP side calls the target (from the number the person
// called) and bridges the two legs' audio until the target hangs up, then hangs up the caller and
// tells the gateway how long the bridge lasted.
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
	bridged.ended(t, "the target's BYE at the limit")
	call.ended(t, "the caller's BYE at the limit")
	callback := gateway.nextCallback(t)
	if seconds, _ := callback.body["seconds"].(float64); callback.body["type"] != "transfer_ended" || seconds < limit.Seconds() || seconds > limit.Seconds()+1 {
		t.Errorf("callback %v, want transfer_ended of about %v", callback.body, limit)
	}
	s.idle(t)
}

// A target that does not take the call (busy): the caller is hung up, and no bridge was counted.
func TestTransferTargetBusyHangsUpTheCaller(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	target := startFarEnd(t, nil, func(d *diago.DialogServerSession) { _ = d.Respond(486, "Busy Here", nil) })
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.transferTo(transferTarget)
	caller.nextRequest(t, sip.REFER)
	target.nextRequest(t, sip.INVITE)
	call.ended(t, "BYE once the target was busy")
	s.idle(t)
	time.Sleep(100 * time.Millisecond) // a callback would come at once
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
// is ignored: the caller is hung up, nothing is dialled.
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
			call.ended(t, "BYE after a refused transfer")
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
