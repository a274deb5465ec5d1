package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// Calls the service places: INVITE sip:<to>@<trunk> (From the call's number), digest credentials
// when the trunk asks, provisional answers as `ringing`, the final one mapped by failureCallback.
// One dial per call id: a retried dial finds the first (kept an hour after the call ended), so it
// never rings twice. The call workflow's ring timer is the authority (its release CANCELs); the
// SIP side gives up on its own only well after it, for a workflow that never released.

const (
	rememberDialsFor = time.Hour
	ringTimeoutSlack = 30 * time.Second
	attachWithin     = 8 * time.Second
)

type placedCall struct {
	mu       sync.Mutex
	cancel   context.CancelFunc // ends the ringing (CANCEL)
	dialog   *diago.DialogClientSession
	released bool
	// joins: another call asks here for this one's answered leg (a transfer's leg, join.go).
	joins chan joinAsk
}

// dial places the call unless this call id was dialled before; true when this request placed it.
func (s *sidecar) dial(callID string, request dialRequest) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, at := range s.dialled {
		if time.Since(at) > rememberDialsFor {
			delete(s.dialled, id)
		}
	}
	if _, known := s.dialled[callID]; known {
		return false
	}
	s.dialled[callID] = time.Now()
	call := &placedCall{joins: make(chan joinAsk)}
	s.calls[callID] = call
	go s.place(callID, call, request)
	return true
}

// release ends a placed call from our side: CANCEL while it rings, BYE once answered.
func (s *sidecar) release(callID string) {
	s.mu.Lock()
	call := s.calls[callID]
	s.mu.Unlock()
	if call == nil {
		return
	}
	call.mu.Lock()
	call.released = true
	cancel, dialog := call.cancel, call.dialog
	call.mu.Unlock()
	if dialog != nil {
		ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = dialog.Hangup(ctx)
	} else if cancel != nil {
		cancel()
	}
}

func (s *sidecar) place(callID string, call *placedCall, request dialRequest) {
	log := s.log.With("callId", callID)
	defer func() {
		s.mu.Lock()
		delete(s.calls, callID)
		s.mu.Unlock()
	}()
	ringFor := time.Duration(max(request.RingTimeoutSeconds, 1))*time.Second + ringTimeoutSlack
	ringCtx, cancel := context.WithTimeout(context.Background(), ringFor)
	defer cancel()
	call.mu.Lock()
	call.cancel = cancel
	released := call.released
	call.mu.Unlock()
	if released {
		return
	}

	callbacks := s.callbacks.queue(request.Gateway, callID)
	defer callbacks.close()
	rang := false
	dialog, med, err := s.invite(ringCtx, request.To, request.From, func(res *sip.Response) {
		if !rang && (res.StatusCode == sip.StatusRinging || res.StatusCode == sip.StatusSessionInProgress) {
			rang = true
			callbacks.push("ringing")
		}
	})
	if dialog != nil {
		defer dialog.Close()
	}
	if err != nil {
		var refused *sipgo.ErrDialogResponse
		switch {
		case errors.As(err, &refused):
			log.Info("dial refused", "status", refused.Res.StatusCode)
			callbacks.push(failureCallback(refused.Res.StatusCode))
		case ringCtx.Err() != nil && !call.isReleased():
			log.Info("never answered: canceled")
			callbacks.push("declined")
		case ringCtx.Err() != nil:
			log.Info("canceled by the call")
		default:
			log.Warn("dial failed", "error", err)
			callbacks.push("not_connected")
		}
		return
	}
	if err := dialog.Ack(context.Background()); err != nil {
		log.Warn("ACK failed", "error", err)
	}
	call.mu.Lock()
	call.dialog = dialog
	released = call.released
	call.mu.Unlock()
	hangUp := func() {
		ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = dialog.Hangup(ctx)
	}
	if released {
		hangUp()
		return
	}
	// The person picked up: their audio attaches to the call the gateway holds, then the call is answered.
	stream, err := openStream(request.StreamsURL, map[string]string{"callId": callID, "token": request.StreamToken})
	if err != nil {
		log.Warn("answered, but the media gateway was not reached", "error", err)
		hangUp()
		callbacks.push("not_connected")
		return
	}
	attached, early := stream.awaitAttached(dialog.Context(), attachWithin)
	if !attached {
		log.Warn("answered, but the media gateway did not take the stream", "reason", stream.closeReason)
		stream.close()
		hangUp()
		callbacks.push("not_connected")
		return
	}
	callbacks.push("answered")
	log.Info("answered")
	s.track(dialog, true)
	end, caller := s.runBridge(log, dialog.ID, dialog, med, stream, early, request.From, callbacks, call.joins)
	s.finish(log, dialog, caller, end, callbacks)
}

func (c *placedCall) isReleased() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.released
}
