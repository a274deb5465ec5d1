package main

// The jitter buffer between the far end's RTP and the gateway: packets leave in sequence order,
// duplicates and late ones are dropped, and one that is missing is waited for while at most
// `depth` later packets are held (60 ms at 20 ms a packet), then taken as lost and replaced by
// silence so the caller's audio keeps its length. In-order packets pass at once: no added delay
// on a clean line. (diago's RTPJitterBuffer stalled after some seconds on loopback here.) A packet
// that is not audio (an RFC 4733 event) is skipped: its number is taken, and nothing comes of it.

const (
	maxConcealed  = 5    // lost packets filled with silence at most, per gap
	sequenceReset = 1000 // a jump this large is a new stream (SSRC change, restart), not loss
)

type jitterBuffer struct {
	depth   int
	started bool
	next    uint16
	held    map[uint16][]byte
}

func newJitterBuffer(depth int) *jitterBuffer {
	return &jitterBuffer{depth: depth, held: map[uint16][]byte{}}
}

// push takes one packet's payload and returns what may now go on, in order.
func (b *jitterBuffer) push(seq uint16, payload []byte) [][]byte {
	distance := int16(seq - b.next)
	if !b.started || distance > sequenceReset || distance < -sequenceReset {
		out := b.flush()
		b.started, b.next = true, seq
		b.held[seq] = payload
		return append(out, b.release()...)
	}
	if distance < 0 {
		return nil // late or a duplicate of one already sent
	}
	if _, dup := b.held[seq]; dup {
		return nil
	}
	b.held[seq] = payload
	return b.release()
}

// skip takes packet `seq` as one that carries no audio: nothing is waited for in its place, and
// what may now go on is returned, as push does.
func (b *jitterBuffer) skip(seq uint16) [][]byte {
	return b.push(seq, nil)
}

func (b *jitterBuffer) release() [][]byte {
	var out [][]byte
	for {
		if payload, ok := b.held[b.next]; ok {
			delete(b.held, b.next)
			if payload != nil {
				out = append(out, payload)
			}
			b.next++
			continue
		}
		if len(b.held) <= b.depth {
			return out
		}
		// The packet waited for is lost: fill the gap up to the oldest one held.
		oldest := b.oldestHeld()
		for i := 0; i < min(int(int16(oldest-b.next)), maxConcealed); i++ {
			out = append(out, silenceFrame())
		}
		b.next = oldest
	}
}

func (b *jitterBuffer) oldestHeld() uint16 {
	first := true
	var oldest uint16
	for seq := range b.held {
		if first || int16(seq-oldest) < 0 {
			oldest, first = seq, false
		}
	}
	return oldest
}

// flush gives what is held, in order (a stream that restarts).
func (b *jitterBuffer) flush() [][]byte {
	var out [][]byte
	for len(b.held) > 0 {
		seq := b.oldestHeld()
		if payload := b.held[seq]; payload != nil {
			out = append(out, payload)
		}
		delete(b.held, seq)
	}
	return out
}

// silenceFrame is 20 ms of μ-law silence, a new one each time (its taker may keep or change it):
// what a lost packet becomes and what a leg plays while it has nothing else.
func silenceFrame() []byte {
	frame := make([]byte, frameBytes)
	for i := range frame {
		frame[i] = ulawSilence
	}
	return frame
}
