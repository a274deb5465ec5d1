package main

import (
	"log/slog"
	"time"

	"github.com/emiago/diago"
)

// The bridge of one answered call: RTP from the far end (PCMU or PCMA, through a jitter buffer)
// goes to the media gateway's stream as μ-law, 20 ms a frame; the gateway's agent audio is played
// out as RTP at the RTP clock (20 ms a packet, silence between lines, as a phone line is), its
// marks echoed once the audio before them has been sent, and `clear` drops what has not. A
// `transfer` event names where the gateway hands the call over; only that typed target is ever
// dialled, never anything read from the close reason (which other Media Streams clients still get).
// Keys go both ways (dtmf.go): the far end's to the stream as `dtmf`, the agent's `dtmf` into the
// play queue with its audio; `clear` drops queued keys too.

const (
	frameBytes    = 160 // 20 ms of 8 kHz G.711
	payloadPCMA   = 8
	ulawSilence   = 0xFF
	jitterPackets = 3 // out-of-order packets held at most (60 ms)
)

// bridgeEnd says who ended the call's audio.
type bridgeEnd struct {
	// by: "far_end" (BYE or CANCEL from the network), "rtp_timeout" (the far end's audio stopped),
	// "gateway" (the gateway closed the stream: the agent hung up), "transfer" (a transfer connected).
	by     string
	reason string // the gateway's close reason, for the log only
	// target of a transfer that connected; bridge, when the SIP side dialled it itself.
	target string
	bridge *answeredTarget
	// joined: a transfer's leg this process placed, handed over to be joined to this call (join.go);
	// "joined" ends that leg's own bridge: its goroutine waits until the other call's bridge is over.
	joined *joinedLeg
}

// approvedTarget is the target of a `transfer` event, when it is one the SIP side may dial (E.164);
// anything else is logged and ignored, so the call goes on (and ends as the gateway ends it).
func approvedTarget(log *slog.Logger, message gatewayMessage) (string, bool) {
	if !e164.MatchString(message.transferTo) {
		log.Warn("transfer target not E.164: ignored", "target", message.transferTo)
		return "", false
	}
	return message.transferTo, true
}

// runBridge carries the call's audio until the far end hangs up (dialog ends), its RTP stops for
// SIP_RTP_TIMEOUT_MS, the gateway closes the stream, or a transfer connects. `early` is gateway
// audio that came before the answer. `dialogID` is the call's SIP dialog, whose INFO requests
// carry keys to the leg. A `transfer` is tried while the stream stays open (transfer.go; a
// bridged target's new leg comes from `from`), and its outcome reported through `callbacks`
// before anything else happens: connected, the stream is closed and the call handed over; failed,
// the agent goes on. A `bridge` joins a leg this process placed to the call (join.go), and
// `joins` (a placed call's; nil for one that came in) is where another call asks for this one's leg.
// The leg's audio goes on after it returns (a transfer may bridge it); finish stops it.
func (s *sidecar) runBridge(log *slog.Logger, dialogID string, dialog liveDialog, med *diago.DialogMedia, stream *streamClient, early []gatewayMessage, from string, callbacks *callbackQueue, joins <-chan joinAsk) (bridgeEnd, *leg) {
	silence := s.cfg.rtpSilence
	caller, err := startLeg(log, dialog.Context(), med, stream.sendAudio, stream.sendKey, stream.echoMark)
	if err != nil {
		// No audio either way: the gateway is told the call is over, as after a far end's BYE.
		stream.stop()
		return bridgeEnd{by: "rtp_timeout", reason: err.Error()}, nil
	}
	s.keypadOn(dialogID, caller)
	asked := make(chan string, 1)
	ask := func(message gatewayMessage) {
		target, ok := approvedTarget(log, message)
		if !ok {
			// Nothing is dialled; the agent goes on with the caller.
			callbacks.report(map[string]any{"type": "transfer_failed", "failure": "refused"})
			return
		}
		select {
		case asked <- target:
		default: // one transfer at a time
		}
	}
	for _, message := range early {
		switch message.event {
		case "media", "mark", "dtmf":
			caller.queue.push(message)
		case "transfer":
			ask(message)
		}
	}

	// The gateway's messages, into the play queue; a transfer is asked for, a leg to join named.
	gatewayGone := make(chan string, 1)
	joinLeg := make(chan string, 1)
	go func() {
		for message := range stream.incoming {
			switch message.event {
			case "clear":
				for _, mark := range caller.queue.clear() {
					stream.echoMark(mark)
				}
			case "transfer":
				ask(message)
			case "bridge":
				select {
				case joinLeg <- message.callID:
				default: // one join at a time
				}
			default:
				caller.queue.push(message)
			}
		}
		gatewayGone <- stream.closeReason
	}()

	// A transfer under way: its target, and where its outcome comes.
	var attempting string
	outcomes := make(chan transferOutcome, 1)
	// dropAttempt lets a transfer still under way end on its own, and hangs up a target it reached.
	dropAttempt := func() {
		if attempting != "" {
			go func() {
				if outcome := <-outcomes; outcome.bridge != nil {
					outcome.bridge.hangUp()
				}
			}()
		}
	}
	gatewayClosed := false
	var closeReason string
	watch := time.NewTicker(250 * time.Millisecond)
	defer watch.Stop()
	for {
		select {
		case <-dialog.Context().Done():
			stream.stop()
			dropAttempt()
			return bridgeEnd{by: "far_end"}, caller
		case <-caller.gone:
			stream.stop()
			dropAttempt()
			return bridgeEnd{by: "far_end"}, caller
		case legID := <-joinLeg:
			var joined *joinedLeg
			if attempting == "" && !gatewayClosed {
				joined = s.takeLeg(legID)
			}
			stream.joined(legID, joined != nil)
			if joined == nil {
				log.Info("transfer leg not joined here", "leg", legID)
				continue
			}
			// The gateway lets both streams go once told; the two legs are joined in finish.
			caller.redirect(func([]byte) {})
			caller.redirectKeys(func(string) {})
			closeJoinedStreams(stream, joined.stream)
			return bridgeEnd{by: "transfer", target: legID, joined: joined}, caller
		case ask := <-joins:
			// Another call takes this one's leg: this call is a transfer's leg, its briefing over.
			if attempting != "" || gatewayClosed {
				ask.reply <- nil
				continue
			}
			return bridgeEnd{by: "joined", joined: handOver(ask, dialog, caller, stream)}, caller
		case target := <-asked:
			if attempting != "" {
				continue
			}
			attempting = target
			// The gateway sends it once the agent's last words have been sent; let them play out.
			waitPlayed(caller)
			go func() { outcomes <- s.tryTransfer(log, dialog, target, from) }()
		case outcome := <-outcomes:
			target := attempting
			attempting = ""
			if outcome.connected {
				callbacks.report(map[string]any{"type": "transfer_connected"})
				stream.stop()
				caller.redirect(func([]byte) {})
				caller.redirectKeys(func(string) {})
				return bridgeEnd{by: "transfer", target: target, bridge: outcome.bridge}, caller
			}
			callbacks.report(map[string]any{"type": "transfer_failed", "failure": outcome.failure})
			log.Info("transfer failed: the call goes on", "target", target, "failure", outcome.failure)
			if gatewayClosed {
				return s.gatewayEnded(caller, closeReason)
			}
		case reason := <-gatewayGone:
			// A transfer under way decides how the call ends; else the agent hung up.
			gatewayClosed, closeReason = true, reason
			if attempting == "" {
				return s.gatewayEnded(caller, reason)
			}
		case <-watch.C:
			if attempting == "" && caller.silentFor() > silence {
				stream.stop()
				log.Debug("rtp timeout", "packets", caller.packets.Load())
				return bridgeEnd{by: "rtp_timeout"}, caller
			}
		}
	}
}

// waitPlayed lets what is queued for the caller go out (at most 2 s).
func waitPlayed(caller *leg) {
	for deadline := time.Now().Add(2 * time.Second); !caller.queue.empty() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// gatewayEnded: the gateway closed the stream once its last audio had played; that plays out,
// then the caller's audio goes nowhere until the BYE.
func (s *sidecar) gatewayEnded(caller *leg, reason string) (bridgeEnd, *leg) {
	waitPlayed(caller)
	caller.redirect(func([]byte) {})
	caller.redirectKeys(func(string) {})
	return bridgeEnd{by: "gateway", reason: reason}, caller
}
