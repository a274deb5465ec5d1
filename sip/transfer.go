package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// A transfer (the gateway's typed `transfer` event, its target checked to be E.164 as it was
// read; a close reason alone never transfers) is tried while the caller is still ours, and its
// outcome reported to the gateway (telephony spec section 1): `transfer_connected` once the target
// answered, `transfer_failed` with why when it did not, and the call goes on with the agent.
//
// First a blind REFER to the target through the trunk: taken (2xx), its outcome is the final
// NOTIFY's sipfrag (2xx: connected). When the far end refuses it (or does not answer it), the SIP
// side calls the target through the trunk itself, as it places any call, and once the target
// answers bridges the two legs' audio directly (each through its jitter buffer, played out at its
// own RTP clock, transcoded when one speaks A-law), and the keys either far end presses are
// pressed on the other (RFC 4733 events or tones, as the other leg takes them); the agent is gone.
// It lasts until either side hangs up, its RTP stops, or TRANSFER_MAX_MINUTES have passed (a
// bridge through our trunk costs per minute: it is bounded); the other then gets a BYE.

const (
	// transferRingFor is how long a target the SIP side dials may ring.
	transferRingFor = 30 * time.Second
	// referOutcomeWithin is how long a taken REFER's final NOTIFY is waited for.
	referOutcomeWithin = 45 * time.Second
)

// transferOutcome is how a transfer attempt ended.
type transferOutcome struct {
	connected bool
	// failure, when not connected: busy, no_answer or refused (the Call's `transfer.failure`).
	failure string
	// bridge is the target the SIP side dialled itself, answered (nil: the far end took the REFER).
	bridge *answeredTarget
	// status is the final SIP status it was read from (0: none came), for the log.
	status int
}

// answeredTarget is a target's call, answered and acknowledged, waiting to be bridged.
type answeredTarget struct {
	dialog *diago.DialogClientSession
	media  *diago.DialogMedia
}

// transferFailure names why a target was not reached from its final SIP status.
func transferFailure(status int) string {
	switch status {
	case 486, 600:
		return "busy"
	case 408, 480, 487:
		return "no_answer"
	default:
		return "refused"
	}
}

// tryTransfer hands the caller (`dialog`) over to `target`: by REFER, else by calling the target
// from `from`. It returns once the outcome is known.
func (s *sidecar) tryTransfer(log *slog.Logger, dialog liveDialog, target, from string) transferOutcome {
	log = log.With("target", target)
	referTo := sip.Uri{User: target, Host: s.referHost()}
	if s.trunk.Port != 0 {
		referTo.Port = s.trunk.Port
	}
	notified := make(chan int, 8)
	ctx, cancel := context.WithTimeout(dialog.Context(), 10*time.Second)
	err := referWithNotify(ctx, dialog, referTo, func(code int) {
		select {
		case notified <- code:
		default:
		}
	})
	cancel()
	if referTaken(err) {
		outcome := awaitReferOutcome(dialog.Context(), notified)
		log.Info("REFER taken", "connected", outcome.connected, "failure", outcome.failure, "notify", outcome.status)
		return outcome
	}
	log.Info("REFER refused: calling the target", "error", err)
	return s.dialTarget(log, dialog.Context(), target, from)
}

// referWithNotify sends the REFER and hands each NOTIFY's status to `onNotify`.
func referWithNotify(ctx context.Context, dialog liveDialog, referTo sip.Uri, onNotify func(int)) error {
	switch d := dialog.(type) {
	case *diago.DialogServerSession:
		return d.ReferOptions(ctx, referTo, diago.ReferServerOptions{OnNotify: onNotify})
	case *diago.DialogClientSession:
		return d.ReferOptions(ctx, referTo, diago.ReferClientOptions{OnNotify: onNotify})
	default:
		return dialog.Refer(ctx, referTo)
	}
}

// awaitReferOutcome waits for a taken REFER's final NOTIFY: 2xx is connected; a failure names why;
// none within referOutcomeWithin is no answer, and a caller gone meanwhile was never handed over.
func awaitReferOutcome(caller context.Context, notified <-chan int) transferOutcome {
	limit := time.NewTimer(referOutcomeWithin)
	defer limit.Stop()
	for {
		select {
		case code := <-notified:
			switch {
			case code < 200:
				continue
			case code < 300:
				return transferOutcome{connected: true, status: code}
			default:
				return transferOutcome{failure: transferFailure(code), status: code}
			}
		case <-limit.C:
			return transferOutcome{failure: "no_answer"}
		case <-caller.Done():
			return transferOutcome{failure: "refused"}
		}
	}
}

// dialTarget calls the target through the trunk, ringing at most transferRingFor (less when the
// caller hangs up first); answered, it is returned to be bridged.
func (s *sidecar) dialTarget(log *slog.Logger, caller context.Context, target, from string) transferOutcome {
	if s.trunk.Host == "" {
		log.Warn("transfer target not dialled: no SIP_TRUNK_URI")
		return transferOutcome{failure: "refused"}
	}
	ringCtx, cancel := context.WithTimeout(caller, transferRingFor)
	defer cancel()
	dialog, med, err := s.invite(ringCtx, target, from, func(*sip.Response) {})
	if err != nil {
		if dialog != nil {
			_ = dialog.Close()
		}
		if res, ok := dialogResponse(err); ok {
			log.Info("transfer target refused", "status", res.StatusCode)
			return transferOutcome{failure: transferFailure(res.StatusCode)}
		}
		log.Info("transfer target not reached", "error", err)
		return transferOutcome{failure: "no_answer"}
	}
	if err := dialog.Ack(context.Background()); err != nil {
		log.Warn("ACK failed", "error", err)
	}
	return transferOutcome{connected: true, bridge: &answeredTarget{dialog: dialog, media: med}}
}

// hangUp ends a target's call that will not be bridged (the caller left as it answered).
func (t *answeredTarget) hangUp() {
	ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	_ = t.dialog.Hangup(ctx)
	_ = t.dialog.Close()
}

// bridgeToTarget bridges the caller's leg to the answered target until either hangs up, either's
// RTP stops or TRANSFER_MAX_MINUTES pass; it answers how long the two were bridged (0: never).
// The caller's leg is still to be hung up after.
func (s *sidecar) bridgeToTarget(log *slog.Logger, callerLeg *leg, target *answeredTarget) time.Duration {
	dialog := target.dialog
	s.track(dialog, true)
	defer s.track(dialog, false)
	defer target.hangUp()
	targetLeg, err := startLeg(log, dialog.Context(), target.media, callerLeg.queue.pushLive, callerLeg.queue.pushKey, func(string) {})
	if err != nil {
		log.Warn("transfer target's audio not opened", "error", err)
		return 0
	}
	defer targetLeg.stop()
	s.keypadOn(dialog.ID, targetLeg)
	return s.joinLegs(log, callerLeg, targetLeg)
}

// joinLegs sends each leg's audio and keys to the other (the agent is gone: none go to the
// gateway) until either leg is over, either's RTP stops or TRANSFER_MAX_MINUTES pass; it answers
// how long they were joined. Neither is hung up here.
func (s *sidecar) joinLegs(log *slog.Logger, callerLeg, targetLeg *leg) time.Duration {
	targetLeg.redirect(callerLeg.queue.pushLive)
	targetLeg.redirectKeys(callerLeg.queue.pushKey)
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
