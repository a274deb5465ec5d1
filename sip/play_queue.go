package main

import "sync"

// The audio a leg is to play at the RTP clock: the gateway's agent audio in 20 ms frames with its
// marks and keys between them, or, on a bridged transfer, the other leg's live audio (kept short,
// so a sender whose clock runs a little fast never builds up delay) and the keys its far end pressed.

// liveBacklog is the most of the other leg's audio held (100 ms); older frames are dropped.
const liveBacklog = 5

// playQueue holds the agent audio not yet sent, and the marks and keys between it.
type playQueue struct {
	mu    sync.Mutex
	items []gatewayMessage
}

func (q *playQueue) push(message gatewayMessage) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if message.event == "media" {
		for start := 0; start < len(message.payload); start += frameBytes {
			end := min(start+frameBytes, len(message.payload))
			q.items = append(q.items, gatewayMessage{event: "media", payload: message.payload[start:end]})
		}
		return
	}
	q.items = append(q.items, message)
}

// pushKey queues a key to press where the audio now ends.
func (q *playQueue) pushKey(key string) {
	q.push(gatewayMessage{event: "dtmf", digit: key})
}

// clear drops the audio and keys not yet sent; its marks are echoed at once, as Twilio does.
func (q *playQueue) clear() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var marks []string
	for _, item := range q.items {
		if item.event == "mark" {
			marks = append(marks, item.mark)
		}
	}
	q.items = nil
	return marks
}

// next gives the marks now due and what is next to play: a frame, or a key (nil and "": nothing).
func (q *playQueue) next() (marks []string, frame []byte, key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) > 0 {
		item := q.items[0]
		q.items = q.items[1:]
		switch item.event {
		case "mark":
			marks = append(marks, item.mark)
		case "dtmf":
			return marks, nil, item.digit
		default:
			return marks, item.payload, ""
		}
	}
	return marks, nil, ""
}

func (q *playQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

// pushLive queues one frame of the other leg's audio, dropping the oldest frames beyond
// liveBacklog (never a key: a key pressed is played).
func (q *playQueue) pushLive(frame []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, gatewayMessage{event: "media", payload: frame})
	over := -liveBacklog
	for _, item := range q.items {
		if item.event == "media" {
			over++
		}
	}
	if over <= 0 {
		return
	}
	kept := q.items[:0]
	for _, item := range q.items {
		if item.event == "media" && over > 0 {
			over--
			continue
		}
		kept = append(kept, item)
	}
	q.items = kept
}
