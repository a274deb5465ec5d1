package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/emiago/sipgo/sip"
)

// How a call's SIP side ends once its audio has: a far end that hung up needs nothing more; when
// the far end's RTP stopped, or the agent hung up (the gateway closed the stream), it gets a BYE.
// A transfer that connected (transfer.go) ends it too: a REFER's far end is handed over, so it
// gets the BYE; a target the SIP side dialled, or a warm transfer's leg it placed (join.go), is
// bridged to the caller first, then both are hung up, and the gateway is told how long the bridge
// lasted (`transfer_ended`, counted in GET /usage as `transfer_seconds`).

type liveDialog interface {
	Refer(ctx context.Context, referTo sip.Uri, headers ...sip.Header) error
	Hangup(ctx context.Context) error
	Context() context.Context
}

// finish ends the call's SIP side; `caller` is its leg's audio (nil when it never started),
// `callbacks` where the call's callbacks go (nil: none can be sent).
func (s *sidecar) finish(log *slog.Logger, dialog liveDialog, caller *leg, end bridgeEnd, callbacks *callbackQueue) {
	defer s.track(dialog, false)
	if caller != nil {
		defer caller.stop()
	}
	log.Info("call over", "by", end.by, "reason", end.reason)
	if end.by == "joined" {
		// Handed over to another call's bridge, which hangs this leg up: held until it is over.
		<-end.joined.done
		return
	}
	if end.joined != nil {
		if bridged := s.bridgeJoined(log.With("leg", end.target), caller, end.joined); bridged > 0 {
			callbacks.pushWith(map[string]any{"type": "transfer_ended", "seconds": bridged.Seconds()})
		}
	}
	if end.by == "far_end" {
		if end.bridge != nil {
			end.bridge.hangUp()
		}
		return
	}
	if end.bridge != nil && caller != nil {
		if bridged := s.bridgeToTarget(log.With("target", end.target), caller, end.bridge); bridged > 0 {
			callbacks.pushWith(map[string]any{"type": "transfer_ended", "seconds": bridged.Seconds()})
		}
	} else if end.bridge != nil {
		end.bridge.hangUp()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := dialog.Hangup(ctx); err != nil {
		log.Debug("BYE not sent", "error", err)
	}
}

// referHost is where a transfer target is reached: through the trunk, else our own host.
func (s *sidecar) referHost() string {
	if s.trunk.Host != "" {
		return s.trunk.Host
	}
	return s.cfg.publicHost
}
