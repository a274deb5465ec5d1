package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/emiago/diago/media"
	"github.com/emiago/sipgo/sip"
	"github.com/zaf/g711"
)

// A call's audio over loopback: RTP from the far end to the gateway's stream and back, its jitter
// buffer on a line that loses and reorders, A-law transcoding, the silence played between the
// agent's lines, marks and clear, and the RTP timeout.

// The far end's audio reaches the gateway as μ-law frames, the agent's audio is played to the far
// end, and a mark comes back once the audio before it has been sent.
func TestAudioBothWaysWithMarks(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	// Before the agent says anything, the far end hears μ-law silence, a frame each 20 ms.
	call.hears(t, "μ-law silence", isFrameOf(ulawSilence))

	call.speaks(t, frame(0x42), frame(0x43))
	if heard := stream.heard(t); !bytes.Equal(heard, frame(0x42)) {
		t.Fatalf("the gateway heard %s first", describe(heard))
	}
	if heard := stream.heard(t); !bytes.Equal(heard, frame(0x43)) {
		t.Fatalf("the gateway heard %s second", describe(heard))
	}

	// A line of 3 frames in one message, then its mark: played in 20 ms frames, the mark after.
	line := append(append(frame(0x10), frame(0x11)...), frame(0x12)...)
	stream.media(line)
	stream.mark("line-1")
	call.hears(t, "the agent's last frame", isFrameOf(0x12))
	message, ok := stream.nextEvent(t, "mark")
	if !ok || message["mark"].(map[string]any)["name"] != "line-1" {
		t.Fatalf("mark echoed: %v", message)
	}
}

// `clear` drops the agent audio not yet played, and echoes the marks queued behind it at once.
func TestClearDropsQueuedAudioAndEchoesItsMarks(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	long := bytes.Repeat(frame(0x20), 250) // 5 s of audio
	stream.media(long)
	stream.mark("after-long-line")
	call.hears(t, "the long line", isFrameOf(0x20))
	cleared := time.Now()
	stream.clear()
	message, ok := stream.nextEvent(t, "mark")
	if !ok || message["mark"].(map[string]any)["name"] != "after-long-line" {
		t.Fatalf("mark echoed: %v", message)
	}
	if waited := time.Since(cleared); waited > time.Second {
		t.Errorf("the mark came %v after clear: the line was played out, not dropped", waited)
	}
	call.hears(t, "silence once cleared", isFrameOf(ulawSilence))
}

// A line that loses and reorders packets: the gateway gets them in sequence order, duplicates and
// late ones dropped, and a lost packet as 20 ms of silence once three later ones are held.
func TestJitterOverTheWire(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	rtp := newRTPSender(t, call)
	const first = 40000
	// 2 comes after 3, 3 twice, 1 late again, 5 never.
	for _, n := range []uint16{0, 1, 3, 2, 3, 4, 1, 6, 7, 8, 9} {
		rtp.send(t, first+n, frame(byte(0x30+n)))
		time.Sleep(time.Millisecond) // the order sent is the order that arrives
	}
	want := [][]byte{
		frame(0x30), frame(0x31), frame(0x32), frame(0x33), frame(0x34),
		frame(ulawSilence), // 5, concealed
		frame(0x36), frame(0x37), frame(0x38), frame(0x39),
	}
	for i, w := range want {
		if heard := stream.heard(t); !bytes.Equal(heard, w) {
			t.Fatalf("frame %d: the gateway heard %s, want %s", i, describe(heard), describe(w))
		}
	}
}

// A far end that speaks only A-law: its audio reaches the gateway as μ-law, and the agent's μ-law
// (and the silence between lines) is played to it as A-law.
func TestALawIsTranscoded(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, []media.Codec{media.CodecAudioAlaw}, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	alaw := g711.EncodeAlaw(bytes.Repeat([]byte{0x00, 0x10}, frameBytes)) // a steady tone of 20 ms
	call.speaks(t, alaw)
	if heard, want := stream.heard(t), g711.Alaw2Ulaw(alaw); !bytes.Equal(heard, want) {
		t.Fatalf("the gateway heard %s, want %s", describe(heard), describe(want))
	}
	call.hears(t, "A-law silence", isFrameOf(g711.Ulaw2Alaw(frame(ulawSilence))[0]))
	stream.media(frame(0x25))
	call.hears(t, "the agent as A-law", isFrameOf(g711.Ulaw2Alaw(frame(0x25))[0]))
}

// The far end's RTP stops (a line gone dead without a BYE): after SIP_RTP_TIMEOUT_MS the call is
// hung up with a BYE and its stream stopped.
func TestRTPTimeoutHangsUp(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	const silence = 300 * time.Millisecond
	s := startSidecar(t, gateway, nil, func(c *config) { c.rtpSilence = silence })
	caller := startFarEnd(t, nil, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)
	answered := time.Now()

	// A little audio first: the timeout counts from the last packet, not from the answer.
	rtp := newRTPSender(t, call)
	var lastPacket time.Time
	for n := range uint16(15) {
		rtp.send(t, n, frame(0x50))
		lastPacket = time.Now()
		time.Sleep(20 * time.Millisecond)
	}
	if time.Since(answered) < silence {
		t.Fatal("the audio did not outlast the timeout")
	}
	stream.stopped(t)
	caller.nextRequest(t, sip.BYE)
	call.ended(t, "BYE after the RTP stopped")
	// Checked every 250 ms: the hang-up comes between the timeout and a tick after it.
	if since := time.Since(lastPacket); since < silence || since > silence+time.Second {
		t.Errorf("hung up %v after the last packet; the timeout is %v", since, silence)
	}
	s.idle(t)
}
