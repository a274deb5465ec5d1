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
// marks echoed once the audio before them has been sent, and `clear` drops what has not.

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
	reason string // the gateway's close reason, e.g. "transferred to +15550100"
}

// runBridge carries the call's audio until the far end hangs up (dialog ends), its RTP stops for
// `silence`, or the gateway closes the stream. `early` is gateway audio that came before the answer.
// The leg's audio goes on after it returns (a transfer may bridge it); finish stops it.
func runBridge(log *slog.Logger, dialog context.Context, med *diago.DialogMedia, stream *streamClient, early []gatewayMessage, silence time.Duration) (bridgeEnd, *leg) {
	caller, err := startLeg(log, dialog, med, stream.sendAudio, stream.echoMark)
	if err != nil {
		return bridgeEnd{by: "rtp_timeout", reason: err.Error()}, nil
	}
	for _, message := range early {
		if message.event != "clear" {
			caller.queue.push(message)
		}
	}

	// The gateway's messages, into the play queue.
	gatewayGone := make(chan string, 1)
	go func() {
		for message := range stream.incoming {
			switch message.event {
			case "clear":
				for _, mark := range caller.queue.clear() {
					stream.echoMark(mark)
				}
			default:
				caller.queue.push(message)
			}
		}
		gatewayGone <- stream.closeReason
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
		case reason := <-gatewayGone:
			// The gateway closes once its last audio has played; let what is queued go out.
			for deadline := time.Now().Add(2 * time.Second); !caller.queue.empty() && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			caller.redirect(func([]byte) {})
			return bridgeEnd{by: "gateway", reason: reason}, caller
		case <-watch.C:
			if caller.silentFor() > silence {
				stream.stop()
				log.Debug("rtp timeout", "packets", caller.packets.Load())
				return bridgeEnd{by: "rtp_timeout"}, caller
			}
		}
	}
}
