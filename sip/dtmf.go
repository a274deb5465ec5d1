package main

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	"github.com/zaf/g711"
)

// The telephone keypad (DTMF), both ways. Keys the far end presses come as RFC 4733
// telephone-events in its RTP (when it offered telephone-event/8000) or as SIP INFO (info.go); each
// goes to the gateway's stream as Twilio's `dtmf` message. Keys the agent presses come from the
// gateway as `dtmf` messages (the SIP side asks for them with `keypad: rfc4733` in its `start`),
// in order with its audio: each is played where it stands in the leg's play queue, as RFC 4733
// events when telephone-event was negotiated, else as in-band tones (100 ms of the key's two sines,
// then 60 ms of silence, as the gateway's own tones are: lib/audio/dtmf.ts).

// keypadKeys are the keys of a telephone keypad, A-D of the fourth column too.
const keypadKeys = "0123456789*#ABCD"

// keypadRFC4733 is the `keypad` custom parameter of a `start`: the client plays the agent's keys
// itself, so the gateway sends them as `dtmf` messages rather than as tones in its audio.
const keypadRFC4733 = "rfc4733"

// keypadKey is `key` as one keypad key (a-d taken as A-D); false when it is not one.
func keypadKey(key string) (string, bool) {
	key = strings.ToUpper(strings.TrimSpace(key))
	if len(key) != 1 || !strings.Contains(keypadKeys, key) {
		return "", false
	}
	return key, true
}

// telephoneEvent is the call's negotiated telephone-event/8000 format, if the far end offered it
// (its payload type as sent; PayloadTypeRecv as received, when the two sides numbered it apart).
func telephoneEvent(med *diago.DialogMedia) (media.Codec, bool) {
	session := med.MediaSession()
	if session == nil {
		return media.Codec{}, false
	}
	for _, codec := range session.CommonCodecs() {
		if codec.Matches(media.CodecTelephoneEvent8000) {
			return codec, true
		}
	}
	return media.Codec{}, false
}

// ---- keys in: RFC 4733 ----

// keyEvents reads the far end's telephone-event packets as key presses: one per event, taken at
// its first end packet (the end's retransmissions are the same event: same timestamp and key).
// diago's RTPDtmfReader is not used: it drops an event whose first packets were lost or carried
// a duration of 0 (it keeps the start only by its duration), and reading it with our own jitter
// buffer would need its packet header anyway; the event payload's decoding is still diago's.
type keyEvents struct {
	reported  bool
	timestamp uint32 // the RTP timestamp (the event's start) of the last key reported
	event     uint8
}

// packet takes one telephone-event packet: the key pressed, when it ends an event not yet reported.
func (k *keyEvents) packet(timestamp uint32, marker bool, payload []byte) (string, bool) {
	var event media.DTMFEvent
	if media.DTMFDecode(payload, &event) != nil {
		return "", false
	}
	if marker {
		// A new event begins (a sender that writes no audio between two keys may give both the
		// same timestamp: the marker tells them apart).
		k.reported = false
	}
	if !event.EndOfEvent || event.Event > 15 {
		return "", false // not over yet, or not a keypad key (flash, tones)
	}
	if k.reported && k.timestamp == timestamp && k.event == event.Event {
		return "", false
	}
	k.reported, k.timestamp, k.event = true, timestamp, event.Event
	return string(media.DTMFToRune(event.Event)), true
}

// ---- keys out: in-band tones ----

const (
	toneSamples = 800 // 100 ms of a key's tone at 8 kHz
	gapSamples  = 480 // 60 ms of silence after it
)

// toneAmplitude: each of the two sines at -7 dBFS (peak), so the pair never clips.
var toneAmplitude = 32767 * math.Pow(10, -7.0/20)

var (
	rowHz    = [4]float64{697, 770, 852, 941}
	columnHz = [4]float64{1209, 1336, 1477, 1633}
)

// keypadLayout is the keypad row by row: a key's index is 4 × row + column.
const keypadLayout = "123A456B789C*0#D"

// dtmfTone is key's in-band DTMF as μ-law at 8 kHz: its tone, then the gap (160 ms, 8 frames);
// nil for a key that is not one.
func dtmfTone(key string) []byte {
	index := strings.Index(keypadLayout, key)
	if len(key) != 1 || index < 0 {
		return nil
	}
	low := 2 * math.Pi * rowHz[index/4] / 8000
	high := 2 * math.Pi * columnHz[index%4] / 8000
	pcm := make([]byte, 2*(toneSamples+gapSamples))
	for i := range toneSamples {
		sample := math.Round(toneAmplitude * (math.Sin(low*float64(i)) + math.Sin(high*float64(i))))
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(sample)))
	}
	return g711.EncodeUlaw(pcm)
}
