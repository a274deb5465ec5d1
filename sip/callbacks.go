package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// Callbacks of a placed call (ringing, answered, busy, declined, not_connected), and of any call
// whose transfer was bridged here (transfer_ended, with its seconds), go to the control port of
// the media gateway holding the call (the dial's `gateway`, else MEDIA_CONTROL_URL; with MEDIA_CONTROL_TOKEN),
// which signals them into the call workflow (media/carrier-callbacks.ts): the gateway already has
// the Temporal client, so the SIP side needs none. Retried a few times: a callback lost is a call
// that waits for its ring timeout.

type callbacks struct {
	token  string
	client *http.Client
	log    *slog.Logger
}

func (c *callbacks) send(gateway, callID string, callback map[string]any) {
	callbackType := callback["type"]
	body, _ := json.Marshal(callback)
	target, err := url.JoinPath(gateway, "/media/carrier/calls", callID, "callback")
	if err != nil {
		c.log.Error("bad gateway URL", "gateway", gateway, "error", err)
		return
	}
	for attempt := 1; attempt <= 5; attempt++ {
		if err = c.post(target, body); err == nil {
			return
		}
		time.Sleep(time.Duration(attempt) * 300 * time.Millisecond)
	}
	c.log.Error("carrier callback not delivered", "callId", callID, "type", callbackType, "error", err)
}

func (c *callbacks) post(target string, body []byte) error {
	request, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	request.Header.Set("content-type", "application/json")
	request.Header.Set("authorization", "Bearer "+c.token)
	response, err := c.client.Do(request)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	if response.StatusCode >= 300 {
		return fmt.Errorf("gateway answered %d", response.StatusCode)
	}
	return nil
}

// callbackQueue sends one call's callbacks in the order they happened (a `ringing` never after
// the `busy` that followed it), one at a time, off the SIP side's own path.
type callbackQueue struct {
	pending chan queuedCallback
	done    chan struct{}
}

type queuedCallback struct {
	body map[string]any
	sent chan struct{} // closed once delivered or given up
}

func (c *callbacks) queue(gateway, callID string) *callbackQueue {
	q := &callbackQueue{pending: make(chan queuedCallback, 16), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for callback := range q.pending {
			c.send(gateway, callID, callback.body)
			close(callback.sent)
		}
	}()
	return q
}

func (q *callbackQueue) push(callbackType string) {
	q.pushWith(map[string]any{"type": callbackType})
}

// pushWith sends a callback with fields beyond its type (`transfer_ended`'s `seconds`).
func (q *callbackQueue) pushWith(callback map[string]any) {
	q.enqueue(callback)
}

// report sends a callback after the ones before it and returns once it was delivered (or given
// up): a transfer's outcome reaches the call before the stream closes.
func (q *callbackQueue) report(callback map[string]any) {
	if sent := q.enqueue(callback); sent != nil {
		<-sent
	}
}

func (q *callbackQueue) enqueue(callback map[string]any) chan struct{} {
	if q == nil {
		return nil
	}
	queued := queuedCallback{body: callback, sent: make(chan struct{})}
	select {
	case q.pending <- queued:
		return queued.sent
	default: // a call has a handful of callbacks; more would be a loop, not news
		return nil
	}
}

// close waits until what was pushed is delivered (or given up).
func (q *callbackQueue) close() {
	close(q.pending)
	<-q.done
}
