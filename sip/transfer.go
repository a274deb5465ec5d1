package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/emiago/sipgo/sip"
)

// A transfer the far end would not take by REFER (refused, or no answer to it): the SIP side calls
// the target through the trunk itself, as it places any call, and once the target answers
// bridges the two legs' audio directly (each through its jitter buffer, played out at its own RTP
// clock, transcoded when one speaks A-law); the agent is gone already. It lasts until either side
// hangs up or its RTP stops; the other then gets a BYE. A target that does not answer (busy,
// refused, nothing within transferRingFor) leaves the caller to be hung up.

const transferRingFor = 30 * time.Second

// bridgeToTarget returns once the bridged call is over, or the target was not reached; either way
// the caller's leg is then still to be hung up.
func (s *sidecar) bridgeToTarget(log *slog.Logger, caller liveDialog, callerLeg *leg, target, from string) {
	log = log.With("target", target)
	if s.trunk.Host == "" {
		log.Warn("transfer target not dialled: no SIP_TRUNK_URI")
		return
	}
	ringCtx, cancel := context.WithTimeout(caller.Context(), transferRingFor)
	defer cancel()
	dialog, med, err := s.invite(ringCtx, target, from, func(*sip.Response) {})
	if dialog != nil {
		defer dialog.Close()
	}
	if err != nil {
		if res, ok := dialogResponse(err); ok {
			log.Info("transfer target refused: hanging up the caller", "status", res.StatusCode)
		} else {
			log.Info("transfer target not reached: hanging up the caller", "error", err)
		}
		return
	}
	if err := dialog.Ack(context.Background()); err != nil {
		log.Warn("ACK failed", "error", err)
	}
	s.track(dialog, true)
	defer s.track(dialog, false)
	defer func() {
		ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = dialog.Hangup(ctx)
	}()
	targetLeg, err := startLeg(log, dialog.Context(), med, callerLeg.queue.pushLive, func(string) {})
	if err != nil {
		log.Warn("transfer target's audio not opened", "error", err)
		return
	}
	defer targetLeg.stop()
	callerLeg.redirect(targetLeg.queue.pushLive)
	log.Info("transfer bridged")

	watch := time.NewTicker(250 * time.Millisecond)
	defer watch.Stop()
	for {
		select {
		case <-callerLeg.gone:
			log.Info("transfer over", "by", "caller")
			return
		case <-targetLeg.gone:
			log.Info("transfer over", "by", "target")
			return
		case <-watch.C:
			if callerLeg.silentFor() > s.cfg.rtpSilence || targetLeg.silentFor() > s.cfg.rtpSilence {
				log.Info("transfer over", "by", "rtp_timeout")
				return
			}
		}
	}
}
