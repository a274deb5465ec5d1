package main

import (
	"context"
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
	// "gateway" (the gateway closed the stream: the agent hung up or transferred).
	by     string
	reason string // the gateway's close reason, for the log only
	// transferTo is the E.164 target of the gateway's `transfer` event; "": hang up.
	transferTo string
}

// gatewayEnd is how the gateway's side of the stream ended.
type gatewayEnd struct {
	reason     string
	transferTo string
}

// approvedTarget is the target of a `transfer` event, when it is one the SIP side may dial (E.164);
// anything else is logged and ignored, so the call is simply hung up.
func approvedTarget(log *slog.Logger, message gatewayMessage) (string, bool) {
	if !e164.MatchString(message.transferTo) {
		log.Warn("transfer target not E.164: ignored", "target", message.transferTo)
		return "", false
	}
	return message.transferTo, true
}

// runBridge carries the call's audio until the far end hangs up (dialog ends), its RTP stops for
// SIP_RTP_TIMEOUT_MS, or the gateway closes the stream. `early` is gateway audio that came before
// the answer. `dialogID` is the call's SIP dialog, whose INFO requests carry keys to the leg.
// The leg's audio goes on after it returns (a transfer may bridge it); finish stops it.
func (s *sidecar) runBridge(log *slog.Logger, dialogID string, dialog context.Context, med *diago.DialogMedia, stream *streamClient, early []gatewayMessage) (bridgeEnd, *leg) {
	silence := s.cfg.rtpSilence
	caller, err := startLeg(log, dialog, med, stream.sendAudio, stream.sendKey, stream.echoMark)
	if err != nil {
		return bridgeEnd{by: "rtp_timeout", reason: err.Error()}, nil
	}
	s.keypadOn(dialogID, caller)
	var transferTo string
	for _, message := range early {
		switch message.event {
		case "media", "mark", "dtmf":
			caller.queue.push(message)
		case "transfer":
			if target, ok := approvedTarget(log, message); ok {
				transferTo = target
			}
		}
	}

	// The gateway's messages, into the play queue; a transfer's target is kept for the end.
	gatewayGone := make(chan gatewayEnd, 1)
	go func() {
		for message := range stream.incoming {
			switch message.event {
			case "clear":
				for _, mark := range caller.queue.clear() {
					stream.echoMark(mark)
				}
			case "transfer":
				if target, ok := approvedTarget(log, message); ok {
					transferTo = target
				}
			default:
				caller.queue.push(message)
			}
		}
		gatewayGone <- gatewayEnd{reason: stream.closeReason, transferTo: transferTo}
	}()

	watch := time.NewTicker(250 * time.Millisecond)
	defer watch.Stop()
	for {
		select {
		case <-dialog.Done():
			stream.stop()
			return bridgeEnd{by: "far_end"}, caller
		case <-caller.gone:
			stream.stop()
			return bridgeEnd{by: "far_end"}, caller
		case gone := <-gatewayGone:
			// The gateway closes once its last audio has played; let what is queued go out.
			for deadline := time.Now().Add(2 * time.Second); !caller.queue.empty() && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			caller.redirect(func([]byte) {})
			caller.redirectKeys(func(string) {})
			return bridgeEnd{by: "gateway", reason: gone.reason, transferTo: gone.transferTo}, caller
		case <-watch.C:
			if caller.silentFor() > silence {
				stream.stop()
				log.Debug("rtp timeout", "packets", caller.packets.Load())
				return bridgeEnd{by: "rtp_timeout"}, caller
			}
		}
	}
}
