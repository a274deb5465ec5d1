package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emiago/diago/media"
	"github.com/emiago/sipgo/sip"
	"github.com/zaf/g711"
)

// The keypad over loopback: keys a far end presses (RFC 4733 events, SIP INFO) reach the
// gateway's stream as Twilio's `dtmf` messages; the gateway's `dtmf` messages reach the far end as
// RFC 4733 events, or as in-band tones when it did not offer telephone-event; keys pass through a
// bridged transfer.

// withKeypad is a far end's codecs with RFC 4733 telephone-event.
var withKeypad = []media.Codec{media.CodecAudioUlaw, media.CodecAudioAlaw, media.CodecTelephoneEvent8000}

// nextMessage is the next message from the SIP side, of any type.
func (s *gatewayStream) nextMessage(t *testing.T) map[string]any {
	t.Helper()
	select {
	case message, open := <-s.events:
		if !open {
			t.Fatal("the stream closed")
		}
		return message
	case <-time.After(within):
		t.Fatal("nothing more from the SIP side")
		return nil
	}
}

// keyOf checks a `dtmf` message as Twilio sends it and gives its key.
func keyOf(t *testing.T, message map[string]any) string {
	t.Helper()
	dtmf, _ := message["dtmf"].(map[string]any)
	sid, _ := message["streamSid"].(string)
	if dtmf == nil || dtmf["track"] != "inbound_track" || !strings.HasPrefix(sid, "MZ") {
		t.Fatalf("not a dtmf message as Twilio sends it: %v", message)
	}
	digit, _ := dtmf["digit"].(string)
	return digit
}

// nextKey is the key of the next `dtmf` message (media before it is skipped).
func (s *gatewayStream) nextKey(t *testing.T) string {
	t.Helper()
	message, ok := s.nextEvent(t, "dtmf")
	if !ok {
		t.Fatal("the stream closed before a key")
	}
	return keyOf(t, message)
}

// speaksWithKeys gives the far end's DTMF writer; the far end speaks `audio` through it, a frame each
// 20 ms, until the test ends.
func (c farCall) speaksWithKeys(t *testing.T, audio []byte) interface{ WriteDTMF(rune) error } {
	t.Helper()
	keys, err := c.media.AudioWriterDTMF()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := keys.Write(audio); err != nil {
				return
			}
		}
	}()
	return keys
}

// Keys 1, 2 and # as RFC 4733 events, the far end speaking throughout: three `dtmf` messages in
// order, and the audio around them untouched (no event packet passed on as audio, no silence
// put in their place).
func TestRFC4733KeysReachTheGateway(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, withKeypad, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)
	if stream.params["keypad"] != keypadRFC4733 {
		t.Errorf("start parameters %v: want keypad rfc4733", stream.params)
	}

	keys := call.speaksWithKeys(t, frame(0x42))
	if heard := stream.heard(t); !bytes.Equal(heard, frame(0x42)) {
		t.Fatalf("the gateway heard %s", describe(heard))
	}
	go func() {
		for _, key := range "12#" {
			if keys.WriteDTMF(key) != nil {
				return
			}
		}
	}()
	var got []string
	for media := 0; len(got) < 3 || media < 10; {
		message := stream.nextMessage(t)
		switch message["event"] {
		case "dtmf":
			got = append(got, keyOf(t, message))
		case "media":
			payload, _ := message["media"].(map[string]any)["payload"].(string)
			if want := base64Of(frame(0x42)); payload != want {
				t.Fatalf("media %q among the keys, want only the far end's audio (%s)", payload, describe(frame(0x42)))
			}
			if len(got) == 3 {
				media++ // the audio goes on after the keys
			}
		default:
			t.Fatalf("unexpected %v", message)
		}
	}
	if strings.Join(got, "") != "12#" {
		t.Fatalf("keys %v, want 1 2 #", got)
	}
}

// sendInfo sends an INFO within the far end's call, of `contentType` with `body`; its answer.
func (c farCall) sendInfo(t *testing.T, contentType, body string) *sip.Response {
	t.Helper()
	dialog, ok := c.dialog.(interface {
		Do(ctx context.Context, req *sip.Request) (*sip.Response, error)
		RemoteContact() *sip.ContactHeader
	})
	if !ok {
		t.Fatalf("%T sends no request", c.dialog)
	}
	req := sip.NewRequest(sip.INFO, dialog.RemoteContact().Address)
	req.AppendHeader(sip.NewHeader("Content-Type", contentType))
	req.SetBody([]byte(body))
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	res, err := dialog.Do(ctx, req)
	if err != nil {
		t.Fatalf("INFO %s: %v", contentType, err)
	}
	return res
}

// Keys as SIP INFO (dtmf-relay and dtmf bodies) reach the gateway as RFC 4733 keys do; an INFO of
// another type is 415 and sends nothing; one outside a call's dialog is 481.
func TestSIPInfoKeysReachTheGateway(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, nil, nil) // no telephone-event: INFO needs none
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	if res := call.sendInfo(t, "application/dtmf-relay", "Signal=5\r\nDuration=160\r\n"); res.StatusCode != 200 {
		t.Fatalf("INFO dtmf-relay: %d", res.StatusCode)
	}
	if key := stream.nextKey(t); key != "5" {
		t.Fatalf("key %q, want 5", key)
	}
	if res := call.sendInfo(t, "application/dtmf", "9"); res.StatusCode != 200 {
		t.Fatalf("INFO dtmf: %d", res.StatusCode)
	}
	if key := stream.nextKey(t); key != "9" {
		t.Fatalf("key %q, want 9", key)
	}
	res := call.sendInfo(t, "text/plain", "7")
	if accept := res.GetHeader("Accept"); res.StatusCode != 415 || accept == nil || !strings.Contains(accept.Value(), "application/dtmf-relay") {
		t.Fatalf("INFO text/plain: %d Accept %v, want 415 with the types taken", res.StatusCode, accept)
	}
	if res := call.sendInfo(t, "application/dtmf-relay", "Signal=x"); res.StatusCode != 400 {
		t.Fatalf("INFO without a key: %d, want 400", res.StatusCode)
	}
	if res := call.sendInfo(t, "application/dtmf-relay", "Signal=#\r\nDuration=100"); res.StatusCode != 200 {
		t.Fatalf("INFO dtmf-relay: %d", res.StatusCode)
	}
	if key := stream.nextKey(t); key != "#" {
		t.Fatalf("key %q after the refused INFOs, want # (nothing of theirs sent)", key)
	}
	if res := sendTo(t, s, sip.INFO, "4721000042"); res.StatusCode != 481 {
		t.Errorf("INFO outside a dialog: %d, want 481", res.StatusCode)
	}
}

// On a call the SIP side placed, its INFO (from the trunk, the dialog's UAS) reaches the stream too.
func TestSIPInfoKeysOnAPlacedCall(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	calls := make(chan farCall, 1)
	trunk := startFarEnd(t, nil, answering(calls))
	s := startSidecar(t, gateway, trunk, nil)
	s.dial(t, gateway, placedCallID, "+4755501234")
	stream := gateway.nextStream(t)
	if stream.params["keypad"] != keypadRFC4733 {
		t.Errorf("start parameters %v: want keypad rfc4733", stream.params)
	}
	stream.attach(placedCallID)
	call := nextCall(t, calls)
	eventually(t, "the call is live", func() bool { _, answered := s.counts(); return answered == 1 })

	if res := call.sendInfo(t, "application/dtmf", "4"); res.StatusCode != 200 {
		t.Fatalf("INFO: %d", res.StatusCode)
	}
	if key := stream.nextKey(t); key != "4" {
		t.Fatalf("key %q, want 4", key)
	}
	if err := call.dialog.Hangup(t.Context()); err != nil {
		t.Fatal(err)
	}
	stream.stopped(t)
	s.idle(t)
}

// farHearing records what a far end hears, in order: "audio:xx" for a run of frames of byte xx,
// "other" for a frame that is not (a tone), "key:k" for an RFC 4733 key. Silence is left out.
type farHearing struct {
	events chan string
}

func (c farCall) listens(t *testing.T, withKeys bool) *farHearing {
	t.Helper()
	h := &farHearing{events: make(chan string, 256)}
	reader, err := c.media.AudioReader()
	if err != nil {
		t.Fatal(err)
	}
	if withKeys {
		keys, err := c.media.AudioReaderDTMF()
		if err != nil {
			t.Fatal(err)
		}
		keys.OnDTMF(func(key rune) error {
			h.events <- "key:" + string(key)
			return nil
		})
		reader = keys
	}
	go func() {
		buf := make([]byte, media.RTPBufSize)
		last := ""
		for {
			n, err := reader.Read(buf)
			if err != nil {
				return
			}
			audio := buf[:n]
			if n != frameBytes || bytes.Equal(audio, frame(ulawSilence)) {
				if n == frameBytes {
					last = ""
				}
				continue
			}
			event := "other"
			if bytes.Equal(audio, bytes.Repeat(audio[:1], n)) {
				event = fmt.Sprintf("audio:%x", audio[0])
			}
			if event != last {
				h.events <- event
			}
			last = event
		}
	}()
	return h
}

// expect checks what the far end hears next.
func (h *farHearing) expect(t *testing.T, want ...string) {
	t.Helper()
	for i, w := range want {
		select {
		case got := <-h.events:
			if got != w {
				t.Fatalf("heard %q at %d, want %q (all: %v)", got, i, w, want)
			}
		case <-time.After(within):
			t.Fatalf("heard nothing at %d, want %q (all: %v)", i, w, want)
		}
	}
}

// The gateway's keys reach a far end that offered telephone-event as RFC 4733 events, where they
// stand among the agent's audio, a key pressed twice as two; no tone is played for them.
func TestGatewayKeysReachTheFarEndAsRFC4733(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil)
	caller := startFarEnd(t, withKeypad, nil)
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)
	hearing := call.listens(t, true)

	stream.media(bytes.Repeat(frame(0x10), 3))
	stream.key("5")
	stream.media(bytes.Repeat(frame(0x12), 3))
	stream.key("#")
	stream.key("#")
	stream.mark("after-keys")
	hearing.expect(t, "audio:10", "key:5", "audio:12", "key:#", "key:#")
	if message, ok := stream.nextEvent(t, "mark"); !ok || message["mark"].(map[string]any)["name"] != "after-keys" {
		t.Fatalf("mark echoed: %v", message)
	}
	select {
	case extra := <-hearing.events:
		t.Fatalf("the far end heard %q besides", extra)
	case <-time.After(100 * time.Millisecond):
	}
}

// key sends a key the agent pressed, as the gateway does for a client with `keypad: rfc4733`.
func (s *gatewayStream) key(digit string) {
	s.write(map[string]any{"event": "dtmf", "streamSid": "MZtest", "dtmf": map[string]any{"digit": digit}})
}

// A far end without telephone-event hears the key as its in-band tone: 100 ms of the key's row
// and column frequencies where the key stood, then silence; A-law too.
func TestGatewayKeysAreTonesWithoutTelephoneEvent(t *testing.T) {
	t.Parallel()
	for _, codec := range []media.Codec{media.CodecAudioUlaw, media.CodecAudioAlaw} {
		t.Run(codec.Name, func(t *testing.T) {
			t.Parallel()
			gateway := newFakeGateway(t)
			s := startSidecar(t, gateway, nil, nil)
			caller := startFarEnd(t, []media.Codec{codec}, nil)
			call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)
			decode, encode := g711.DecodeUlaw, func(b []byte) []byte { return b }
			if codec.PayloadType == payloadPCMA {
				decode, encode = g711.DecodeAlaw, g711.Ulaw2Alaw
			}
			reader, err := call.media.AudioReader()
			if err != nil {
				t.Fatal(err)
			}
			frames := make(chan []byte, 512)
			go func() {
				buf := make([]byte, media.RTPBufSize)
				for {
					n, err := reader.Read(buf)
					if err != nil {
						close(frames)
						return
					}
					frames <- append([]byte(nil), buf[:n]...)
				}
			}()
			nextFrame := func() []byte {
				select {
				case f, ok := <-frames:
					if !ok {
						t.Fatal("the far end's audio ended")
					}
					return f
				case <-time.After(within):
					t.Fatal("the far end heard nothing")
				}
				return nil
			}

			stream.media(bytes.Repeat(frame(0x10), 5))
			stream.key("5")
			stream.media(frame(0x12))
			for !bytes.Equal(nextFrame(), encode(frame(0x10))) {
			}
			// After the agent's audio: the key's tone, then silence, then the audio after it.
			var tone []float64
			toneFrames := 0
			for {
				f := nextFrame()
				if bytes.Equal(f, encode(frame(0x10))) {
					continue
				}
				if bytes.Equal(f, encode(frame(0x12))) {
					break
				}
				pcm := pcmOf(decode(f))
				loud := false
				for _, sample := range pcm {
					loud = loud || sample > 64 || sample < -64
				}
				if loud {
					if toneFrames > 0 && len(tone) != toneFrames*len(pcm) {
						t.Fatal("the tone was broken by silence")
					}
					toneFrames++
					tone = append(tone, pcm...)
				}
			}
			if toneFrames != 5 {
				t.Fatalf("the tone lasted %d frames, want 5 (100 ms)", toneFrames)
			}
			if key := keyHeard(tone); key != "5" {
				t.Fatalf("the tone is heard as %q, want 5 (770 and 1336 Hz)", key)
			}
			if power770, power697 := goertzel(tone, 770), goertzel(tone, 697); power770 < 100*power697 {
				t.Errorf("770 Hz %.3g, 697 Hz %.3g: the row is not clear", power770, power697)
			}
		})
	}
}

// Bridged to a transfer target, the caller's keys go to the target, not to the gateway (whose
// stream is over): as RFC 4733 events when the target takes them.
func TestKeysPassThroughABridgedTransfer(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	targets := make(chan farCall, 1)
	target := startFarEnd(t, withKeypad, answering(targets))
	s := startSidecar(t, gateway, target, nil)
	caller := startFarEnd(t, withKeypad, nil) // refuses the REFER: the SIP side bridges
	call, stream := caller.callAnswered(t, s, gateway, gatewayCallID)

	stream.transferTo(transferTarget)
	bridged := nextCall(t, targets)
	hearing := bridged.listens(t, true)
	keys := call.speaksWithKeys(t, frame(0x61))
	hearing.expect(t, "audio:61")
	if err := keys.WriteDTMF('7'); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case event := <-hearing.events:
			if event == "key:7" {
				return
			}
			if event != "audio:61" {
				t.Fatalf("the target heard %q", event)
			}
		case <-time.After(within):
			t.Fatal("the target never heard the key")
		}
	}
}

func base64Of(audio []byte) string { return base64.StdEncoding.EncodeToString(audio) }
