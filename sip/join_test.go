package main

import (
	"testing"
	"time"
)

// legCallID is a warm transfer's leg: a call the SIP side places for the caller's call.
const legCallID = "9a1d3c5e-7b2f-4e60-8d14-3c5a7e9b1f02"

// askJoin sends the gateway's `bridge` for leg `legID` on the caller's stream and answers the SIP
// side's `bridged`: whether it joined the leg.
func askJoin(t *testing.T, stream *gatewayStream, legID string) bool {
	t.Helper()
	stream.write(map[string]any{"event": "bridge", "bridge": map[string]any{"callId": legID}})
	message, ok := stream.nextEvent(t, "bridged")
	if !ok {
		t.Fatal("the stream closed before `bridged`")
	}
	bridged, _ := message["bridged"].(map[string]any)
	if bridged["callId"] != legID {
		t.Fatalf("bridged %v, want the leg %s", bridged, legID)
	}
	joined, _ := bridged["joined"].(bool)
	return joined
}

// answeredLeg is a call that came in and the leg placed for its warm transfer, both answered.
type answeredLeg struct {
	s                 *testSidecar
	gateway           *fakeGateway
	call, person      farCall
	stream, legStream *gatewayStream
}

// legAnswered: a caller's call comes in, then the person is rung as a leg of it through the trunk
// and answers, their audio with the gateway for the briefing.
func legAnswered(t *testing.T) answeredLeg {
	t.Helper()
	gateway := newFakeGateway(t)
	targets := make(chan farCall, 1)
	s := startSidecar(t, gateway, startFarEnd(t, nil, answering(targets)), nil)
	call, stream := startFarEnd(t, nil, nil).callAnswered(t, s, gateway, gatewayCallID)
	s.dial(t, gateway, legCallID, transferTarget)
	legStream := gateway.nextStream(t)
	legStream.attach(legCallID)
	gateway.expectCallbacks(t, legCallID, "ringing", "answered")
	return answeredLeg{s: s, gateway: gateway, call: call, person: nextCall(t, targets), stream: stream, legStream: legStream}
}

// A caller's call and the leg placed for its warm transfer are both this process's: the gateway
// asks it to join them (`bridge` on the caller's stream), and it joins their RTP directly. Each
// hears the other, neither stream carries the audio any more, and when the person hangs up the
// caller gets a BYE and the gateway the bridge's length on the caller's call.
func TestWarmTransferLegJoinedHere(t *testing.T) {
	t.Parallel()
	j := legAnswered(t)
	s, gateway, call, stream, legStream, person := j.s, j.gateway, j.call, j.stream, j.legStream, j.person
	if stream.params["join"] == "" || stream.params["join"] != legStream.params["join"] {
		t.Fatalf("join %q and %q: both streams should name this process", stream.params["join"], legStream.params["join"])
	}
	legStream.media(frame(0x55))
	person.hears(t, "the briefing", isFrameOf(0x55))

	joinedAt := time.Now()
	if !askJoin(t, stream, legCallID) {
		t.Fatal("the leg was not joined")
	}
	call.speaks(t, repeated(frame(0x61), 50)...)
	person.hears(t, "the caller", isFrameOf(0x61))
	person.speaks(t, repeated(frame(0x62), 50)...)
	call.hears(t, "the person", isFrameOf(0x62))
	// Neither side's audio went to the gateway, which lets both streams go once told.
	stream.closeWith("transferred")
	legStream.closeWith("transferred")
	if _, open := stream.nextEvent(t, "media"); open {
		t.Error("the caller's audio still went to the gateway once joined")
	}
	if _, open := legStream.nextEvent(t, "media"); open {
		t.Error("the person's audio still went to the gateway once joined")
	}

	// The person hangs up: the caller gets a BYE, the gateway the bridge's length.
	time.Sleep(100 * time.Millisecond)
	if err := person.dialog.Hangup(t.Context()); err != nil {
		t.Fatal(err)
	}
	call.ended(t, "BYE once the person hung up")
	callback := gateway.nextCallback(t)
	seconds, _ := callback.body["seconds"].(float64)
	if callback.callID != gatewayCallID || callback.body["type"] != "transfer_ended" || seconds < 0.1 || seconds > time.Since(joinedAt).Seconds()+0.1 {
		t.Errorf("callback %s %v, want transfer_ended of the bridge for %s", callback.callID, callback.body, gatewayCallID)
	}
	s.idle(t)
	gateway.noCallback(t)
}

// The caller hangs up once joined: the person gets a BYE too (the leg is hung up by the bridge).
func TestWarmTransferJoinedCallerHangsUp(t *testing.T) {
	t.Parallel()
	j := legAnswered(t)
	s, gateway, call, stream, person := j.s, j.gateway, j.call, j.stream, j.person
	if !askJoin(t, stream, legCallID) {
		t.Fatal("the leg was not joined")
	}
	if err := call.dialog.Hangup(t.Context()); err != nil {
		t.Fatal(err)
	}
	person.ended(t, "BYE to the person once the caller hung up")
	if callback := gateway.nextCallback(t); callback.body["type"] != "transfer_ended" {
		t.Errorf("callback %v, want transfer_ended", callback.body)
	}
	s.idle(t)
}

// A leg that is not this process's (or no longer there) is not joined: `bridged` says so at once,
// and the call goes on with the agent.
func TestUnknownLegIsNotJoined(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, startFarEnd(t, nil, nil), nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	started := time.Now()
	if askJoin(t, stream, legCallID) {
		t.Fatal("a leg that is not here was joined")
	}
	if waited := time.Since(started); waited > 2*joinAskWithin {
		t.Errorf("the answer took %v", waited)
	}
	agentGoesOnThenHangsUp(t, s, gateway, call, stream, "the agent after the refused join")
}
