package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	"github.com/zaf/g711"
)

// The bridge of one answered call: RTP from the far end (PCMU or PCMA, through a jitter buffer)
// goes to the media gateway's stream as μ-law, 20 ms a frame; the gateway's agent audio is played
// out as RTP at the RTP clock (20 ms a packet, silence between lines, as a phone line is), its
// marks echoed once the audio before them has been sent, and `clear` drops what has not.

const (
	frameBytes    = 160 // 20 ms of 8 kHz G.711
	payloadPCMA   = 8
	ulawSilence   = 0xFF
	jitterPackets = 3 // out-of-order packets held at most (60 ms)
)

// bridgeEnd says who ended the call's audio.
type bridgeEnd struct {
	// by: "far_end" (BYE or CANCEL from the network), "rtp_timeout" (the far end's audio stopped),
	// "gateway" (the gateway closed the stream: the agent hung up or transferred).
	by     string
	reason string // the gateway's close reason, e.g. "transferred to +15550100"
}

// playQueue holds the agent audio not yet sent, and the marks between it.
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

// clear drops the audio not yet sent; its marks are echoed at once, as Twilio does.
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

// next gives the marks now due and the next frame (nil: nothing to play).
func (q *playQueue) next() ([]string, []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var marks []string
	for len(q.items) > 0 {
		item := q.items[0]
		q.items = q.items[1:]
		if item.event == "mark" {
			marks = append(marks, item.mark)
			continue
		}
		return marks, item.payload
	}
	return marks, nil
}

func (q *playQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

// runBridge carries the call's audio until the far end hangs up (dialog ends), its RTP stops for
// `silence`, or the gateway closes the stream. `early` is gateway audio that came before the answer.
func runBridge(log *slog.Logger, dialog context.Context, med *diago.DialogMedia, stream *streamClient, early []gatewayMessage, silence time.Duration) bridgeEnd {
	props := diago.MediaProps{}
	reader, err := med.AudioReader(diago.WithAudioReaderMediaProps(&props))
	if err != nil {
		return bridgeEnd{by: "rtp_timeout", reason: err.Error()}
	}
	writer, err := med.AudioWriter()
	if err != nil {
		return bridgeEnd{by: "rtp_timeout", reason: err.Error()}
	}
	alaw := props.Codec.PayloadType == payloadPCMA
	log.Debug("bridging", "codec", props.Codec.Name, "local", props.Laddr, "remote", props.Raddr)

	queue := &playQueue{}
	for _, message := range early {
		if message.event != "clear" {
			queue.push(message)
		}
	}
	ended := make(chan bridgeEnd, 4)
	var lastHeard, packets atomic.Int64
	lastHeard.Store(time.Now().UnixNano())

	// The far end's audio, up to the gateway, through the jitter buffer.
	go func() {
		buf := make([]byte, media.RTPBufSize)
		jitter := newJitterBuffer(jitterPackets)
		for {
			n, err := reader.Read(buf)
			if err != nil {
				log.Debug("far end audio ended", "error", err)
				ended <- bridgeEnd{by: "far_end"}
				return
			}
			if n == 0 {
				continue
			}
			lastHeard.Store(time.Now().UnixNano())
			packets.Add(1)
			payload := append([]byte(nil), buf[:n]...)
			if alaw {
				payload = g711.Alaw2Ulaw(payload)
			}
			for _, frame := range jitter.push(med.RTPPacketReader.PacketHeader.SequenceNumber, payload) {
				stream.sendAudio(frame)
			}
		}
	}()

	// The gateway's messages, into the play queue.
	gatewayGone := make(chan string, 1)
	go func() {
		for message := range stream.incoming {
			switch message.event {
			case "clear":
				for _, mark := range queue.clear() {
					stream.echoMark(mark)
				}
			default:
				queue.push(message)
			}
		}
		gatewayGone <- stream.closeReason
	}()

	// The agent's audio, out at the RTP clock (each Write waits for its 20 ms tick).
	stopPlaying := make(chan struct{})
	go func() {
		silent := make([]byte, frameBytes)
		for i := range silent {
			silent[i] = ulawSilence
		}
		for {
			select {
			case <-stopPlaying:
				return
			default:
			}
			marks, frame := queue.next()
			for _, mark := range marks {
				stream.echoMark(mark)
			}
			if frame == nil {
				frame = silent
			}
			if alaw {
				frame = g711.Ulaw2Alaw(frame)
			}
			if _, err := writer.Write(frame); err != nil {
				ended <- bridgeEnd{by: "far_end"}
				return
			}
		}
	}()
	defer close(stopPlaying)

	watch := time.NewTicker(250 * time.Millisecond)
	defer watch.Stop()
	for {
		select {
		case <-dialog.Done():
			stream.stop()
			return bridgeEnd{by: "far_end"}
		case end := <-ended:
			stream.stop()
			return end
		case reason := <-gatewayGone:
			// The gateway closes once its last audio has played; let what is queued go out.
			for deadline := time.Now().Add(2 * time.Second); !queue.empty() && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			return bridgeEnd{by: "gateway", reason: reason}
		case <-watch.C:
			if time.Since(time.Unix(0, lastHeard.Load())) > silence {
				stream.stop()
				log.Debug("rtp timeout", "packets", packets.Load())
				return bridgeEnd{by: "rtp_timeout"}
			}
		}
	}
}
