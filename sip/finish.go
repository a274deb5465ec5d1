package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/emiago/sipgo/sip"
)

// How a call's SIP side ends once its audio has: a far end that hung up needs nothing more; when
// the far end's RTP stopped, or the agent hung up (the gateway closed the stream), it gets a BYE.
// A transfer (the gateway's close reason `transferred to +E164`) is a blind REFER to the target
// through the trunk first; a far end that refuses REFER is just hung up (the call workflow has
// already recorded the transfer; no bridged second leg is made here).

type liveDialog interface {
	Refer(ctx context.Context, referTo sip.Uri, headers ...sip.Header) error
	Hangup(ctx context.Context) error
}

const transferredPrefix = "transferred to "

func (s *sidecar) finish(log *slog.Logger, dialog liveDialog, end bridgeEnd) {
	defer s.track(dialog, false)
	log.Info("call over", "by", end.by, "reason", end.reason)
	if end.by == "far_end" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if target, ok := strings.CutPrefix(end.reason, transferredPrefix); ok && end.by == "gateway" {
		referTo := sip.Uri{User: target, Host: s.referHost()}
		if s.trunk.Port != 0 {
			referTo.Port = s.trunk.Port
		}
		if err := dialog.Refer(ctx, referTo); err != nil {
			log.Warn("REFER refused: hanging up", "target", target, "error", err)
		}
	}
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
