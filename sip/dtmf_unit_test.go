package main

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/emiago/diago/media"
	"github.com/zaf/g711"
)

// The keypad's pure parts: the in-band tones, the RFC 4733 reader, INFO bodies, the jitter
// buffer's skipped event packets.

// goertzel is the power of `frequency` in 8 kHz PCM.
func goertzel(samples []float64, frequency float64) float64 {
	coefficient := 2 * math.Cos(2*math.Pi*frequency/8000)
	var s1, s2 float64
	for _, x := range samples {
		s1, s2 = x+coefficient*s1-s2, s1
	}
	return s1*s1 + s2*s2 - coefficient*s1*s2
}

// pcmOf decodes 16-bit little-endian PCM.
func pcmOf(lpcm []byte) []float64 {
	samples := make([]float64, len(lpcm)/2)
	for i := range samples {
		samples[i] = float64(int16(binary.LittleEndian.Uint16(lpcm[2*i:])))
	}
	return samples
}

// keyHeard is the key whose row and column stand out in `samples` ("" when none does): each the
// strongest of its group, 10 times (10 dB) stronger than the group's next.
func keyHeard(samples []float64) string {
	strongest := func(group [4]float64) int {
		best, next := -1, 0.0
		powers := [4]float64{}
		for i, f := range group {
			powers[i] = goertzel(samples, f)
			if best < 0 || powers[i] > powers[best] {
				best = i
			}
		}
		for i, p := range powers {
			if i != best && p > next {
				next = p
			}
		}
		if powers[best] < 10*next || powers[best] < 1e9 {
			return -1
		}
		return best
	}
	row, column := strongest(rowHz), strongest(columnHz)
	if row < 0 || column < 0 {
		return ""
	}
	return keypadLayout[4*row+column : 4*row+column+1]
}

func TestDTMFToneEveryKey(t *testing.T) {
	for _, key := range keypadKeys {
		tone := dtmfTone(string(key))
		if len(tone) != 8*frameBytes {
			t.Fatalf("%c: %d bytes, want 160 ms (8 frames)", key, len(tone))
		}
		pcm := pcmOf(g711.DecodeUlaw(tone))
		if heard := keyHeard(pcm[:toneSamples]); heard != string(key) {
			t.Errorf("%c: the tone is heard as %q", key, heard)
		}
		peak := 0.0
		for _, sample := range pcm[:toneSamples] {
			peak = max(peak, math.Abs(sample))
		}
		// Two sines of -7 dBFS each: the pair peaks near -1 dBFS, never clipping.
		if limit := 32767 * math.Pow(10, -1.0/20) * 1.03; peak > limit || peak < 0.8*limit {
			t.Errorf("%c: peak %.0f, want about %.0f", key, peak, limit)
		}
		for i, b := range tone[toneSamples:] {
			if b != ulawSilence {
				t.Fatalf("%c: the gap's sample %d is %#x, not silence", key, i, b)
			}
		}
	}
	if dtmfTone("x") != nil || dtmfTone("55") != nil || dtmfTone("") != nil {
		t.Error("a tone for what is not a key")
	}
}

func TestKeypadKey(t *testing.T) {
	for in, want := range map[string]string{"5": "5", "#": "#", "*": "*", "a": "A", " D ": "D", "0": "0"} {
		if key, ok := keypadKey(in); !ok || key != want {
			t.Errorf("%q: %q %v, want %q", in, key, ok, want)
		}
	}
	for _, in := range []string{"", "w", "E", "12", "+"} {
		if key, ok := keypadKey(in); ok {
			t.Errorf("%q taken as %q", in, key)
		}
	}
}

// eventPacket is a telephone-event payload.
func eventPacket(key rune, end bool, duration uint16) []byte {
	events := media.RTPDTMFEncode8000(key)
	event := events[0]
	event.EndOfEvent, event.Duration = end, duration
	return media.DTMFEncode(event)
}

func TestRFC4733KeyOncePerPress(t *testing.T) {
	type pkt struct {
		timestamp uint32
		marker    bool
		payload   []byte
	}
	var k keyEvents
	var got []string
	feed := func(packets ...pkt) {
		for _, p := range packets {
			if key, ok := k.packet(p.timestamp, p.marker, p.payload); ok {
				got = append(got, key)
			}
		}
	}
	// 1 as diago sends it: a start, updates, the end three times.
	feed(pkt{100, true, eventPacket('1', false, 160)}, pkt{100, false, eventPacket('1', false, 320)},
		pkt{100, false, eventPacket('1', true, 800)}, pkt{100, false, eventPacket('1', true, 800)}, pkt{100, false, eventPacket('1', true, 800)})
	// 2 at the same timestamp (no audio between): its marker makes it a new press.
	feed(pkt{100, true, eventPacket('2', false, 0)}, pkt{100, false, eventPacket('2', true, 800)}, pkt{100, false, eventPacket('2', true, 800)})
	// # whose start packets were all lost: its end still counts, once.
	feed(pkt{2000, false, eventPacket('#', true, 800)}, pkt{2000, false, eventPacket('#', true, 800)})
	// # again, a new event (a new timestamp), its marker packet lost too.
	feed(pkt{4000, false, eventPacket('#', false, 320)}, pkt{4000, false, eventPacket('#', true, 800)})
	// A flash (event 16) and a short packet are no keys.
	feed(pkt{6000, true, []byte{16, 0x80, 0, 160}}, pkt{7000, true, []byte{1, 0x80}})
	if want := []string{"1", "2", "#", "#"}; !equalStrings(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInfoBodies(t *testing.T) {
	for _, c := range []struct {
		contentType, body, key string
	}{
		{"application/dtmf-relay", "Signal=5\r\nDuration=160\r\n", "5"},
		{"Application/DTMF-Relay; charset=utf-8", "Duration=250\r\nsignal= #\r\n", "#"},
		{"application/dtmf-relay", "Signal=*\nDuration=100", "*"},
		{"application/dtmf-relay", "Signal=11\r\nDuration=160", "#"},
		{"application/dtmf-relay", "Signal=10", "*"},
		{"application/dtmf-relay", "Signal=d", "D"},
		{"application/dtmf", "5", "5"},
		{"application/dtmf", "#\r\n", "#"},
		{"application/dtmf", "12", "A"},
	} {
		key, err := infoKey(c.contentType, []byte(c.body))
		if err != nil || key != c.key {
			t.Errorf("%s %q: %q %v, want %q", c.contentType, c.body, key, err, c.key)
		}
	}
	for _, c := range []struct {
		contentType, body string
		want              error
	}{
		{"text/plain", "5", errInfoType},
		{"application/sdp", "v=0", errInfoType},
		{"", "Signal=5", errInfoType},
		{"application/dtmf-relay", "Duration=160", errInfoBody},
		{"application/dtmf-relay", "Signal=x", errInfoBody},
		{"application/dtmf-relay", "Signal=16", errInfoBody},
		{"application/dtmf", "55", errInfoBody},
	} {
		if key, err := infoKey(c.contentType, []byte(c.body)); !errors.Is(err, c.want) {
			t.Errorf("%s %q: %q %v, want %v", c.contentType, c.body, key, err, c.want)
		}
	}
}

// Event packets take their place in the audio's sequence: the audio after them passes at once,
// neither held for them nor concealed with silence.
func TestJitterSkipsEventPackets(t *testing.T) {
	b := newJitterBuffer(3)
	sent(t, b, 10, 10)
	for seq := uint16(11); seq <= 17; seq++ {
		if out := b.skip(seq); len(out) != 0 {
			t.Fatalf("skip %d gave %d frames", seq, len(out))
		}
	}
	sent(t, b, 18, 18)
	// Out of order: an event packet that comes late still lets the audio held behind it go.
	sent(t, b, 20)
	if out := b.skip(19); len(out) != 1 || out[0][0] != 20 {
		t.Fatalf("skip 19 gave %v, want audio 20", out)
	}
}
