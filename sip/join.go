package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"
)

// A warm transfer joined here (telephony spec section 8). The person rung for a transfer is a leg
// of the call the SIP side placed like any call (outbound.go), its audio with the gateway for the
// briefing. When the caller's call is ours too, the gateway does not relay the two streams: it
// sends `bridge` with the leg's call id on the caller's stream, and the SIP side takes the leg's
// answered audio from the goroutine that placed it and joins the two legs' RTP directly, as it
// joins a target it dialled itself (transfer.go): each side's audio and keys go to the other
// until either hangs up, either's RTP stops or TRANSFER_MAX_MINUTES pass; then both get a BYE and
// the gateway is told the bridge's length (`transfer_ended`). It answers `bridged` with whether it
// joined them; joined, the gateway lets both streams go. Only legs of this process can be joined:
// each stream's `start` carries this process's `join` id, and the gateway asks only when the
// caller's and the leg's ids are one (else it bridges the two streams itself).

const (
	// joinAskWithin is how long a leg's goroutine has to take an ask (it is in its bridge's loop).
	joinAskWithin = time.Second
	// joinedStreamsCloseAfter: the gateway closes both streams once told; this closes them if it does not.
	joinedStreamsCloseAfter = 5 * time.Second
)

// joinID names this process to the gateway (`join` in each stream's `start`).
var joinID = func() string {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	return hex.EncodeToString(id)
}()

// joinAsk asks a placed call's goroutine for its answered leg; it replies on `reply` (nil: not now).
type joinAsk struct {
	reply chan *joinedLeg
}

// joinedLeg is a placed call's answered leg, handed to the call it is joined to. Its goroutine
// waits on `done` (closed by the bridge's owner once it hung the leg up) before it lets the dialog go.
type joinedLeg struct {
	dialog liveDialog
	leg    *leg
	stream *streamClient
	done   chan struct{}
}

// takeLeg asks placed call `legID` for its answered leg; nil when it is not ours, not answered
// yet, or over.
func (s *sidecar) takeLeg(legID string) *joinedLeg {
	s.mu.Lock()
	call := s.calls[legID]
	s.mu.Unlock()
	if call == nil {
		return nil
	}
	ask := joinAsk{reply: make(chan *joinedLeg, 1)}
	select {
	case call.joins <- ask:
	case <-time.After(joinAskWithin):
		return nil
	}
	return <-ask.reply
}

// handOver gives this call's answered leg to the call that asked: its audio and keys go nowhere
// until the bridge takes them; the stream stays open until the gateway, told, closes it.
func handOver(ask joinAsk, dialog liveDialog, caller *leg, stream *streamClient) *joinedLeg {
	caller.redirect(func([]byte) {})
	caller.redirectKeys(func(string) {})
	joined := &joinedLeg{dialog: dialog, leg: caller, stream: stream, done: make(chan struct{})}
	ask.reply <- joined
	return joined
}

// joined tells the gateway on the caller's stream that leg `legID` is (or is not) joined to it.
func (s *streamClient) joined(legID string, joined bool) {
	s.send(map[string]any{"event": "bridged", "bridged": map[string]any{"callId": legID, "joined": joined}})
}

// closeJoinedStreams closes both streams in case the gateway, told, did not.
func closeJoinedStreams(caller, leg *streamClient) {
	time.AfterFunc(joinedStreamsCloseAfter, func() {
		caller.close()
		leg.close()
	})
}

// bridgeJoined joins the caller's leg to the leg handed over until either ends (joinLegs), then
// hangs the leg up and lets its goroutine go; it answers how long the two were joined.
func (s *sidecar) bridgeJoined(log *slog.Logger, callerLeg *leg, joined *joinedLeg) time.Duration {
	defer close(joined.done)
	defer func() {
		ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = joined.dialog.Hangup(ctx)
	}()
	return s.joinLegs(log, callerLeg, joined.leg)
}
