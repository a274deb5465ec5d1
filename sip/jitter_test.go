package main

import (
	"bytes"
	"testing"
)

func packet(n byte) []byte { return []byte{n} }

func sent(t *testing.T, b *jitterBuffer, seq uint16, want ...byte) {
	t.Helper()
	out := b.push(seq, packet(byte(seq)))
	var got []byte
	for _, p := range out {
		if len(p) == frameBytes {
			got = append(got, 0) // concealed
		} else {
			got = append(got, p[0])
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("push %d: got %v, want %v", seq, got, want)
	}
}

func TestJitterInOrderPassesAtOnce(t *testing.T) {
	b := newJitterBuffer(3)
	sent(t, b, 10, 10)
	sent(t, b, 11, 11)
	sent(t, b, 12, 12)
}

func TestJitterReorders(t *testing.T) {
	b := newJitterBuffer(3)
	sent(t, b, 10, 10)
	sent(t, b, 12)
	sent(t, b, 11, 11, 12)
	sent(t, b, 11) // duplicate
	sent(t, b, 9)  // late
	sent(t, b, 13, 13)
}

func TestJitterLossIsConcealedAfterDepth(t *testing.T) {
	b := newJitterBuffer(3)
	sent(t, b, 10, 10)
	sent(t, b, 12)
	sent(t, b, 13)
	sent(t, b, 14)
	sent(t, b, 15, 0, 12, 13, 14, 15) // 11 lost: silence in its place
}

func TestJitterWrapsAndResets(t *testing.T) {
	b := newJitterBuffer(3)
	sent(t, b, 65535, 255)
	sent(t, b, 0, 0)
	sent(t, b, 30000, 48) // a new stream
	sent(t, b, 30001, 49)
}
