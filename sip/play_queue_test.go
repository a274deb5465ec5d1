package main

import "testing"

func TestPlayQueueKeepsMarksBetweenFrames(t *testing.T) {
	q := &playQueue{}
	q.push(gatewayMessage{event: "media", payload: make([]byte, frameBytes+10)})
	q.push(gatewayMessage{event: "mark", mark: "line-1"})
	marks, frame := q.next()
	if len(marks) != 0 || len(frame) != frameBytes {
		t.Fatalf("first: marks %v, %d bytes", marks, len(frame))
	}
	marks, frame = q.next()
	if len(marks) != 0 || len(frame) != 10 {
		t.Fatalf("second: marks %v, %d bytes", marks, len(frame))
	}
	marks, frame = q.next()
	if len(marks) != 1 || marks[0] != "line-1" || frame != nil {
		t.Fatalf("third: marks %v, frame %v", marks, frame)
	}
}

func TestPlayQueueLiveAudioKeepsOnlyTheNewest(t *testing.T) {
	q := &playQueue{}
	for n := range liveBacklog + 3 {
		q.pushLive([]byte{byte(n)})
	}
	for want := 3; want < liveBacklog+3; want++ {
		_, frame := q.next()
		if frame == nil || frame[0] != byte(want) {
			t.Fatalf("got %v, want frame %d", frame, want)
		}
	}
	if !q.empty() {
		t.Fatal("frames beyond the backlog were kept")
	}
}
