package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/emiago/sipgo/sip"
)

// How a call's SIP side ends once its audio has: a far end that hung up needs nothing more; when
// the far end's RTP stopped, or the agent hung up (the gateway closed the stream), it gets a BYE.
// A transfer (the gateway's typed `transfer` event, its target checked to be E.164 as it was read;
// a close reason alone never transfers) is a blind REFER to the target through the trunk first;
// when the far end refuses it (or does not answer it), the SIP side calls the target and bridges
// the two legs (transfer.go), then hangs up, and tells the gateway how long the bridged leg lasted
// (`transfer_ended`, counted in GET /usage as `transfer_seconds`). The call workflow has recorded
// the transfer either way.

type liveDialog interface {
	Refer(ctx context.Context, referTo sip.Uri, headers ...sip.Header) error
	Hangup(ctx context.Context) error
	Context() context.Context
}

// finish ends the call's SIP side; `caller` is its leg's audio (nil when it never started), `from`
// the service's number on the call (a bridged transfer's new leg comes from it), `callbacks` where
// the call's callbacks go (nil: none can be sent).
func (s *sidecar) finish(log *slog.Logger, dialog liveDialog, caller *leg, end bridgeEnd, from string, callbacks *callbackQueue) {
	defer s.track(dialog, false)
	if caller != nil {
		defer caller.stop()
	}
	log.Info("call over", "by", end.by, "reason", end.reason)
	if end.by == "far_end" {
		return
	}
	if target := end.transferTo; target != "" && end.by == "gateway" {
		referTo := sip.Uri{User: target, Host: s.referHost()}
		if s.trunk.Port != 0 {
			referTo.Port = s.trunk.Port
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := dialog.Refer(ctx, referTo)
		cancel()
		if !referTaken(err) && caller != nil {
			log.Info("REFER refused: bridging a call to the target", "target", target, "error", err)
			if bridged := s.bridgeToTarget(log, dialog, caller, target, from); bridged > 0 {
				callbacks.pushWith(map[string]any{"type": "transfer_ended", "seconds": bridged.Seconds()})
			}
		}
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
