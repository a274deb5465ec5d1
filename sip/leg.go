package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	"github.com/zaf/g711"
)

// One answered call leg's audio, for as long as the leg lives: its RTP (PCMU or PCMA, through a
// jitter buffer) is read as μ-law frames and handed to `heard`, and its play queue is played out
// at the RTP clock (silence when empty). `heard` can be redirected: to the gateway's stream while
// the agent holds the call, to the other leg on a bridged transfer. The leg's RTP reader is never
// handed over, so no packet is read twice and none waits in the socket while the target rings.

type leg struct {
	queue     *playQueue
	heard     atomic.Pointer[func([]byte)]
	marks     func(string) // a mark whose audio before it has been sent
	lastHeard atomic.Int64 // unix nanoseconds of its last RTP packet
	packets   atomic.Int64
	// gone is closed when the leg is over: its dialog ended, stop was called, or its RTP can no
	// longer be read or written (the media closed).
	gone chan struct{}
	stop context.CancelFunc
}

// startLeg starts reading and playing the leg's audio until `dialog` ends or stop is called.
func startLeg(log *slog.Logger, dialog context.Context, med *diago.DialogMedia, heard func([]byte), marks func(string)) (*leg, error) {
	props := diago.MediaProps{}
	reader, err := med.AudioReader(diago.WithAudioReaderMediaProps(&props))
	if err != nil {
		return nil, err
	}
	writer, err := med.AudioWriter()
	if err != nil {
		return nil, err
	}
	alaw := props.Codec.PayloadType == payloadPCMA
	log.Debug("leg audio", "codec", props.Codec.Name, "local", props.Laddr, "remote", props.Raddr)
	ctx, stop := context.WithCancel(dialog)
	l := &leg{queue: &playQueue{}, marks: marks, gone: make(chan struct{}), stop: stop}
	l.heard.Store(&heard)
	l.lastHeard.Store(time.Now().UnixNano())
	var goneOnce atomic.Bool
	markGone := func() {
		if goneOnce.CompareAndSwap(false, true) {
			close(l.gone)
		}
	}

	// What the leg hears, in order through the jitter buffer, as μ-law.
	go func() {
		defer markGone()
		buf := make([]byte, media.RTPBufSize)
		jitter := newJitterBuffer(jitterPackets)
		for {
			n, err := reader.Read(buf)
			if err != nil {
				log.Debug("leg audio ended", "error", err)
				return
			}
			if n == 0 {
				continue
			}
			l.lastHeard.Store(time.Now().UnixNano())
			l.packets.Add(1)
			payload := append([]byte(nil), buf[:n]...)
			if alaw {
				payload = g711.Alaw2Ulaw(payload)
			}
			for _, frame := range jitter.push(med.RTPPacketReader.PacketHeader.SequenceNumber, payload) {
				(*l.heard.Load())(frame)
			}
		}
	}()

	// What the leg plays, at the RTP clock (each Write waits for its 20 ms tick).
	go func() {
		defer markGone()
		silent := silenceFrame()
		for ctx.Err() == nil {
			marks, frame := l.queue.next()
			for _, mark := range marks {
				l.marks(mark)
			}
			if frame == nil {
				frame = silent
			}
			if alaw {
				frame = g711.Ulaw2Alaw(frame)
			}
			if _, err := writer.Write(frame); err != nil {
				return
			}
		}
	}()
	return l, nil
}

// redirect sends what the leg hears from now on to `heard`.
func (l *leg) redirect(heard func([]byte)) {
	l.heard.Store(&heard)
}

// silentFor is how long the leg has sent no RTP.
func (l *leg) silentFor() time.Duration {
	return time.Since(time.Unix(0, l.lastHeard.Load()))
}
