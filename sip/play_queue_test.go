package main

import "testing"

func TestPlayQueueKeepsMarksBetweenFrames(t *testing.T) {
	q := &playQueue{}
	q.push(gatewayMessage{event: "media", payload: make([]byte, frameBytes+10)})
	q.push(gatewayMessage{event: "mark", mark: "line-1"})
	marks, frame, _ := q.next()
	if len(marks) != 0 || len(frame) != frameBytes {
		t.Fatalf("first: marks %v, %d bytes", marks, len(frame))
	}
	marks, frame, _ = q.next()
	if len(marks) != 0 || len(frame) != 10 {
		t.Fatalf("second: marks %v, %d bytes", marks, len(frame))
	}
	marks, frame, key := q.next()
	if len(marks) != 1 || marks[0] != "line-1" || frame != nil || key != "" {
		t.Fatalf("third: marks %v, frame %v, key %q", marks, frame, key)
	}
}

// A key is played where it stands between the audio and the marks; clear drops queued keys too.
func TestPlayQueueKeepsKeysInOrder(t *testing.T) {
	q := &playQueue{}
	q.push(gatewayMessage{event: "media", payload: frame(0x10)})
	q.push(gatewayMessage{event: "mark", mark: "before-key"})
	q.push(gatewayMessage{event: "dtmf", digit: "5"})
	q.push(gatewayMessage{event: "media", payload: frame(0x12)})
	if _, audio, key := q.next(); len(audio) != frameBytes || key != "" {
		t.Fatalf("first: %d bytes, key %q", len(audio), key)
	}
	if marks, audio, key := q.next(); len(marks) != 1 || marks[0] != "before-key" || audio != nil || key != "5" {
		t.Fatalf("second: marks %v, %d bytes, key %q; want the mark, then key 5", marks, len(audio), key)
	}
	if _, audio, key := q.next(); len(audio) != frameBytes || audio[0] != 0x12 || key != "" {
		t.Fatalf("third: %s, key %q", describe(audio), key)
	}

	q.pushKey("1")
	q.push(gatewayMessage{event: "mark", mark: "after-key"})
	if marks := q.clear(); len(marks) != 1 || marks[0] != "after-key" {
		t.Fatalf("clear echoed %v", marks)
	}
	if marks, audio, key := q.next(); marks != nil || audio != nil || key != "" {
		t.Fatalf("after clear: marks %v, %d bytes, key %q", marks, len(audio), key)
	}
}

func TestPlayQueueLiveAudioKeepsOnlyTheNewest(t *testing.T) {
	q := &playQueue{}
	for n := range liveBacklog + 3 {
		q.pushLive([]byte{byte(n)})
	}
	for want := 3; want < liveBacklog+3; want++ {
		_, frame, _ := q.next()
		if frame == nil || frame[0] != byte(want) {
			t.Fatalf("got %v, want frame %d", frame, want)
		}
	}
	if !q.empty() {
		t.Fatal("frames beyond the backlog were kept")
	}
}

// The other leg's keys outlive its audio's backlog: only frames are dropped.
func TestPlayQueueLiveBacklogKeepsKeys(t *testing.T) {
	q := &playQueue{}
	q.pushLive([]byte{0})
	q.pushKey("#")
	for n := 1; n < liveBacklog+3; n++ {
		q.pushLive([]byte{byte(n)})
	}
	if _, frame, key := q.next(); frame != nil || key != "#" {
		t.Fatalf("first: %v, key %q; want the key, the oldest frames dropped", frame, key)
	}
	for want := 3; want < liveBacklog+3; want++ {
		if _, frame, _ := q.next(); frame == nil || frame[0] != byte(want) {
			t.Fatalf("got %v, want frame %d", frame, want)
		}
	}
}
