package main

import (
	"context"
	"io"
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
// Keys the far end presses (RFC 4733 events in its RTP, or SIP INFO) go to `keys`, redirected
// alike; keys in the play queue are played as RFC 4733 events, or as tones without them (dtmf.go).

type leg struct {
	queue     *playQueue
	heard     atomic.Pointer[func([]byte)]
	keys      atomic.Pointer[func(string)]
	marks     func(string) // a mark whose audio before it has been sent
	lastHeard atomic.Int64 // unix nanoseconds of its last RTP packet
	packets   atomic.Int64
	// gone is closed when the leg is over: its dialog ended, stop was called, or its RTP can no
	// longer be read or written (the media closed).
	gone chan struct{}
	stop context.CancelFunc
}

// startLeg starts reading and playing the leg's audio until `dialog` ends or stop is called.
func startLeg(log *slog.Logger, dialog context.Context, med *diago.DialogMedia, heard func([]byte), keys func(string), marks func(string)) (*leg, error) {
	props := diago.MediaProps{}
	reader, err := med.AudioReader(diago.WithAudioReaderMediaProps(&props))
	if err != nil {
		return nil, err
	}
	// With telephone-event negotiated, keys go out as its events (diago's DTMF writer shares the
	// audio's sequence numbers and SSRC), else as tones in the audio.
	events, hasEvents := telephoneEvent(med)
	var keyWriter *diago.DTMFWriter
	var writer io.Writer
	if hasEvents {
		keyWriter = &diago.DTMFWriter{}
		writer, err = med.AudioWriter(diago.WithAudioWriterDTMF(keyWriter))
	} else {
		writer, err = med.AudioWriter()
	}
	if err != nil {
		return nil, err
	}
	alaw := props.Codec.PayloadType == payloadPCMA
	log.Debug("leg audio", "codec", props.Codec.Name, "telephoneEvent", hasEvents, "local", props.Laddr, "remote", props.Raddr)
	ctx, stop := context.WithCancel(dialog)
	l := &leg{queue: &playQueue{}, marks: marks, gone: make(chan struct{}), stop: stop}
	l.heard.Store(&heard)
	l.keys.Store(&keys)
	l.lastHeard.Store(time.Now().UnixNano())
	var goneOnce atomic.Bool
	markGone := func() {
		if goneOnce.CompareAndSwap(false, true) {
			close(l.gone)
		}
	}

	// What the leg hears, in order through the jitter buffer, as μ-law; its keys apart.
	go func() {
		defer markGone()
		buf := make([]byte, media.RTPBufSize)
		jitter := newJitterBuffer(jitterPackets)
		var pressed keyEvents
		var audioSSRC uint32
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
			header := &med.RTPPacketReader.PacketHeader
			if hasEvents && header.PayloadType == events.PayloadTypeRecv() {
				// An event packet is never audio. It takes its place in the audio's sequence, so
				// the jitter buffer neither waits for it nor fills it with silence.
				if key, ok := pressed.packet(header.Timestamp, header.Marker, buf[:n]); ok {
					(*l.keys.Load())(key)
				}
				if header.SSRC == audioSSRC {
					for _, frame := range jitter.skip(header.SequenceNumber) {
						(*l.heard.Load())(frame)
					}
				}
				continue
			}
			audioSSRC = header.SSRC
			payload := append([]byte(nil), buf[:n]...)
			if alaw {
				payload = g711.Alaw2Ulaw(payload)
			}
			for _, frame := range jitter.push(header.SequenceNumber, payload) {
				(*l.heard.Load())(frame)
			}
		}
	}()

	// What the leg plays, at the RTP clock (each Write waits for its 20 ms tick).
	play := func(frame []byte) error {
		if alaw {
			frame = g711.Ulaw2Alaw(frame)
		}
		_, err := writer.Write(frame)
		return err
	}
	go func() {
		defer markGone()
		silent := silenceFrame()
		for ctx.Err() == nil {
			marks, frame, key := l.queue.next()
			for _, mark := range marks {
				l.marks(mark)
			}
			if key != "" {
				if err := l.playKey(med, keyWriter, play, key); err != nil {
					return
				}
				continue
			}
			if frame == nil {
				frame = silent
			}
			if err := play(frame); err != nil {
				return
			}
		}
	}()
	return l, nil
}

// playKey plays one key: as RFC 4733 events through keyWriter (nil: telephone-event was not
// negotiated), else as its in-band tone, frame by frame.
func (l *leg) playKey(med *diago.DialogMedia, keyWriter *diago.DTMFWriter, play func([]byte) error, key string) error {
	if keyWriter == nil {
		tone := dtmfTone(key)
		for start := 0; start < len(tone); start += frameBytes {
			if err := play(tone[start : start+frameBytes]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := keyWriter.WriteDTMF(rune(key[0])); err != nil {
		return err
	}
	// diago sends the event's packets at 20 ms intervals without advancing the RTP timestamp
	// (they all carry the event's start, as RFC 4733 has it), so the audio after them would carry
	// that timestamp too: move it on by the time the event took, keeping the RTP clock in step
	// with the audio's (and telling the next key's start from this one's).
	sent := len(media.RTPDTMFEncode8000(rune(key[0]))) // packets, 20 ms (160 samples) apart
	med.RTPPacketWriter.DelayTimestamp(uint32(sent) * 160)
	return nil
}

// redirect sends what the leg hears from now on to `heard`.
func (l *leg) redirect(heard func([]byte)) {
	l.heard.Store(&heard)
}

// redirectKeys sends the keys the far end presses from now on to `keys`.
func (l *leg) redirectKeys(keys func(string)) {
	l.keys.Store(&keys)
}

// pressed: the far end pressed `key` (a SIP INFO said so).
func (l *leg) pressed(key string) {
	(*l.keys.Load())(key)
}

// silentFor is how long the leg has sent no RTP.
func (l *leg) silentFor() time.Duration {
	return time.Since(time.Unix(0, l.lastHeard.Load()))
}
