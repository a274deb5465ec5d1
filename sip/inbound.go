package main

import (
	"time"

	"github.com/emiago/diago"
)

// Calls that come in: an INVITE whose request-URI user (else the To user) is a workspace number,
// E.164 with or without `+`, is offered to the media gateway exactly like a Media Streams `start`
// with `to`/`from` (../spec/voice-media-v1.md sections 3 and 6). The gateway takes it (its
// `attached` mark: the Call is recorded and its workflow started) and only then is the INVITE
// answered; a number without a published agent, or any other refusal, is `480 Temporarily
// Unavailable` and no Call. Retransmitted INVITEs are absorbed by the transaction layer, and a
// second INVITE of a Call-ID being served (a new branch) is answered 482: one call either way.

const takeWithin = 10 * time.Second

func (s *sidecar) serveInbound(d *diago.DialogServerSession) {
	sipCallID := d.InviteRequest.CallID().Value()
	log := s.log.With("sipCallId", sipCallID)
	release, ok := s.claimInbound(sipCallID)
	if !ok {
		log.Info("refused: a second INVITE of a call already being served")
		_ = d.Respond(482, "Loop Detected", nil)
		return
	}
	defer release()
	_ = d.Trying()
	to := phoneNumber(d.InviteRequest.Recipient.User)
	if to == "" {
		to = phoneNumber(d.ToUser())
	}
	asserted := make([]string, 0, 1)
	for _, header := range d.InviteRequest.GetHeaders("P-Asserted-Identity") {
		asserted = append(asserted, header.Value())
	}
	from := callerNumber(asserted, d.FromUser())
	if to == "" {
		log.Info("refused: not a phone number", "user", d.InviteRequest.Recipient.User)
		_ = d.Respond(480, "Temporarily Unavailable", nil)
		return
	}
	gateway := s.placement.pick(d.Context())
	stream, err := openStream(streamsURL(gateway.public), map[string]string{"to": to, "from": from, "token": s.cfg.token})
	if err != nil {
		log.Warn("refused: media gateway not reached", "error", err)
		_ = d.Respond(503, "Service Unavailable", nil)
		return
	}
	taken, early := stream.awaitAttached(d.Context(), takeWithin)
	if !taken {
		// The gateway's close reason says why: unknown_number, no_agent, agent_not_published, ...
		log.Info("refused", "to", to, "reason", stream.closeReason)
		stream.close()
		_ = d.Respond(480, "Temporarily Unavailable", nil)
		return
	}
	med, err := d.Answer(diago.AnswerOptions{})
	if err != nil {
		log.Warn("answer failed", "error", err)
		stream.stop()
		return
	}
	log.Info("answered", "to", to, "from", from, "gateway", gateway.public)
	s.track(d, true)
	// The gateway named the call it took (its `attached` mark): a transfer's outcome and a bridged
	// transfer's length go there.
	var callbacks *callbackQueue
	if stream.callID != "" {
		callbacks = s.callbacks.queue(gateway.control, stream.callID)
		defer callbacks.close()
	}
	// A bridged transfer's new leg comes from the number the person called.
	end, caller := s.runBridge(log, d.ID, d, med, stream, early, to, callbacks, nil)
	s.finish(log, d, caller, end, callbacks)
}
