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
// clock, transcoded when one speaks A-law), and the keys either far end presses are pressed on
// the other (RFC 4733 events or tones, as the other leg takes them); the agent is gone already.
// It lasts until either side hangs up, its RTP stops, or TRANSFER_MAX_MINUTES have passed (a
// bridge through our trunk costs per minute: it is bounded); the other then gets a BYE. A target
// that does not answer (busy, refused, nothing within transferRingFor) leaves the caller to be
// hung up.

const transferRingFor = 30 * time.Second

// bridgeToTarget returns once the bridged call is over, or the target was not reached; either way
// the caller's leg is then still to be hung up. It answers how long the two were bridged (0: never).
func (s *sidecar) bridgeToTarget(log *slog.Logger, caller liveDialog, callerLeg *leg, target, from string) time.Duration {
	log = log.With("target", target)
	if s.trunk.Host == "" {
		log.Warn("transfer target not dialled: no SIP_TRUNK_URI")
		return 0
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
		return 0
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
	// Each side's keys are pressed on the other (the agent is gone: none go to the gateway).
	targetLeg, err := startLeg(log, dialog.Context(), med, callerLeg.queue.pushLive, callerLeg.queue.pushKey, func(string) {})
	if err != nil {
		log.Warn("transfer target's audio not opened", "error", err)
		return 0
	}
	defer targetLeg.stop()
	s.keypadOn(dialog.ID, targetLeg)
	callerLeg.redirect(targetLeg.queue.pushLive)
	callerLeg.redirectKeys(targetLeg.queue.pushKey)
	bridgedAt := time.Now()
	log.Info("transfer bridged", "maxSeconds", s.cfg.transferMax.Seconds())

	limit := time.NewTimer(s.cfg.transferMax)
	defer limit.Stop()
	watch := time.NewTicker(250 * time.Millisecond)
	defer watch.Stop()
	over := func(by string) time.Duration {
		bridged := time.Since(bridgedAt)
		log.Info("transfer over", "by", by, "seconds", bridged.Seconds())
		return bridged
	}
	for {
		select {
		case <-callerLeg.gone:
			return over("caller")
		case <-targetLeg.gone:
			return over("target")
		case <-limit.C:
			return over("limit")
		case <-watch.C:
			if callerLeg.silentFor() > s.cfg.rtpSilence || targetLeg.silentFor() > s.cfg.rtpSilence {
				return over("rtp_timeout")
			}
		}
	}
}
