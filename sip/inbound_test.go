package main

import (
	"context"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
)

// Calls that come in, over loopback: a far end calls the SIP side, which offers the call to the
// fake gateway and answers only once the gateway took it.

const gatewayCallID = "0d9c1a52-6c1e-4f37-9d55-1f7f4f7b2a10"

func TestInboundCallIsOfferedToTheGatewayThenAnswered(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil)

	answered := make(chan error, 1)
	var call farCall
	go func() {
		var err error
		// The trunk asserts the caller; the From user is the caller's own to write.
		call, err = caller.call(context.Background(), s, "4721000042", "+4711111111",
			sip.NewHeader("P-Asserted-Identity", `"Kari" <sip:+4791234567@trunk.example.com;user=phone>`))
		answered <- err
	}()
	stream := gateway.nextStream(t)
	want := map[string]string{"to": "+4721000042", "from": "+4791234567", "token": testStreamsToken}
	for key, value := range want {
		if stream.params[key] != value {
			t.Errorf("start %s = %q, want %q (all: %v)", key, stream.params[key], value, stream.params)
		}
	}
	// Not answered while the gateway has not taken it.
	select {
	case err := <-answered:
		t.Fatalf("answered before the gateway took the call: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	stream.attach(gatewayCallID)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("not answered: %v", err)
		}
	case <-time.After(within):
		t.Fatal("not answered once the gateway took the call")
	}
	eventually(t, "the answered call is counted", func() bool { _, answered := s.counts(); return answered == 1 })

	// The caller hangs up (BYE from the far end): the stream stops, nothing is held.
	if err := call.dialog.Hangup(context.Background()); err != nil {
		t.Fatal(err)
	}
	stream.stopped(t)
	s.idle(t)
}

func TestInboundRefusals(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()

	// A number the gateway does not take (no published agent): it closes the socket, 480.
	refused := make(chan error, 1)
	go func() {
		_, err := caller.call(ctx, s, "+4721000099", "+4799999999")
		refused <- err
	}()
	gateway.nextStream(t).closeWith("no_agent")
	if status := inviteStatus(t, <-refused); status != 480 {
		t.Errorf("refused by the gateway: %d, want 480", status)
	}

	// Not a phone number: 480 without asking the gateway.
	_, err := caller.call(ctx, s, "reception", "+4799999999")
	if status := inviteStatus(t, err); status != 480 {
		t.Errorf("not a number: %d, want 480", status)
	}
	gateway.noStream(t)
	s.idle(t)
}

func TestInboundGatewayNotReached(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, func(c *config) { c.gateway = "http://127.0.0.1:1" })
	caller := startFarEnd(t, nil, nil)
	_, err := caller.call(context.Background(), s, "+4721000042", "+4799999999")
	if status := inviteStatus(t, err); status != 503 {
		t.Errorf("gateway down: %d, want 503", status)
	}
}

// A second INVITE of a Call-ID being served (a merged request: a new branch, not a retransmission)
// is answered 482 and makes no second call.
func TestInboundSecondInviteOfACallIs482(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	client := rawClient(t)
	invite := func() *sip.Request {
		req := sip.NewRequest(sip.INVITE, s.uri("+4721000042"))
		callID := sip.CallIDHeader("merged@far-end.test")
		req.AppendHeader(&callID)
		req.AppendHeader(&sip.ContactHeader{Address: sip.Uri{User: "far", Host: "127.0.0.1", Port: 5999}})
		return req
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	first := make(chan *sip.Response, 1)
	go func() {
		res, _ := client.Do(ctx, invite())
		first <- res
	}()
	stream := gateway.nextStream(t) // the first is being served
	res, err := client.Do(ctx, invite())
	if err != nil || res.StatusCode != 482 {
		t.Fatalf("the second INVITE: %v %v, want 482", res, err)
	}
	gateway.noStream(t)
	stream.closeWith("no_agent")
	if res := <-first; res == nil || res.StatusCode != 480 {
		t.Fatalf("the first INVITE: %v, want 480", res)
	}
}

// The agent hangs up (the gateway closes the stream): the caller gets a BYE.
func TestInboundAgentHangsUpSendsBye(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)
	stream.closeWith("")
	caller.nextRequest(t, sip.BYE)
	call.ended(t, "BYE after the agent hung up")
	s.idle(t)
}

// When the SIP side stops, the calls it holds are hung up.
func TestHangUpAllByesLiveCalls(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)
	s.hangUpAll()
	call.ended(t, "BYE when the SIP side stops")
	stream.stopped(t)
	s.idle(t)
}
