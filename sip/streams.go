package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// A Media Streams client (../spec/voice-media-v1.md section 3), the side Twilio's <Connect><Stream>
// plays: the caller's audio goes up as `media`, the gateway's agent audio, marks and `clear` come
// down, and `transfer` with the target when the agent hands the call over (sent just before the
// close; the SIP side dials only that target, never one read from the close reason). The gateway
// answers a `start` it takes with the mark `attached`, and closes the socket when it does not take
// the call (a number without a published agent) or when the call is over. Keys go both ways as
// `dtmf`: the far end's up as Twilio sends them, the agent's down in order with its audio (the
// `start` says `keypad: rfc4733`: the SIP side plays keys itself, as RFC 4733 events or tones).

// gatewayMessage is one message from the gateway: agent audio, a mark, a key, `clear`, or `transfer`.
type gatewayMessage struct {
	event      string
	payload    []byte // μ-law, for `media`
	mark       string
	digit      string // the key of a `dtmf` (one of 0-9 * # A-D)
	callID     string // the `attached` mark's call; the `bridge`'s leg to join
	transferTo string // the `transfer` target as the gateway sent it (checked before it is dialled)
}

type streamClient struct {
	conn      *websocket.Conn
	streamSid string
	writeMu   sync.Mutex
	sequence  int
	chunk     int
	// incoming carries the gateway's messages in order; closed when the socket closes.
	incoming chan gatewayMessage
	// closeReason is the gateway's close reason, readable once incoming is closed.
	closeReason string
	closeCode   int
	// callID is the call the gateway took the stream for (its `attached` mark says it).
	callID string
}

// streamsPath is where the gateway serves Media Streams on its public port.
const streamsPath = "/media/streams"

// streamsURL is the Media Streams endpoint of the gateway whose public URL is `gateway`
// (MEDIA_GATEWAY_URL: http://HOST:MEDIA_PORT).
func streamsURL(gateway string) string {
	u, err := url.Parse(gateway)
	if err != nil {
		return gateway
	}
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path = streamsPath
	return u.String()
}

// openStream connects to `address` (ws://HOST:PORT/media/streams) and sends `connected` and
// `start` with the given custom parameters, `keypad: rfc4733` (the agent's keys as `dtmf`),
// `transfer: report` (a transfer is tried here while the stream stays open, and its outcome
// reported) and `join` (this process: two of its calls' legs can be joined here, join.go).
func openStream(address string, parameters map[string]string) (*streamClient, error) {
	custom := map[string]string{"keypad": keypadRFC4733, "transfer": "report", "join": joinID}
	for key, value := range parameters {
		custom[key] = value
	}
	dialer := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	conn, _, err := dialer.Dial(address, nil)
	if err != nil {
		return nil, fmt.Errorf("media gateway %s not reached: %w", address, err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	s := &streamClient{conn: conn, streamSid: "MZ" + hex.EncodeToString(id), incoming: make(chan gatewayMessage, 4096)}
	go s.readLoop()
	s.send(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"})
	s.send(map[string]any{
		"event": "start",
		"start": map[string]any{
			"streamSid":        s.streamSid,
			"callSid":          "CA" + hex.EncodeToString(id),
			"tracks":           []string{"inbound"},
			"customParameters": custom,
			"mediaFormat":      map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
		},
	})
	return s, nil
}

// awaitAttached waits for the gateway's `attached` mark: true when it took the stream, false when
// it closed the socket (refused) or did not answer within `limit`. Messages before it are kept.
func (s *streamClient) awaitAttached(ctx context.Context, limit time.Duration) (bool, []gatewayMessage) {
	var early []gatewayMessage
	timeout := time.After(limit)
	for {
		select {
		case <-ctx.Done():
			return false, early
		case message, open := <-s.incoming:
			if !open {
				return false, early
			}
			if message.event == "mark" && message.mark == "attached" {
				s.callID = message.callID
				return true, early
			}
			early = append(early, message)
		case <-timeout:
			return false, early
		}
	}
}

func (s *streamClient) readLoop() {
	defer close(s.incoming)
	for {
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			if closeErr, ok := err.(*websocket.CloseError); ok {
				s.closeCode, s.closeReason = closeErr.Code, closeErr.Text
			}
			return
		}
		var message struct {
			Event string `json:"event"`
			Media struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark struct {
				Name string `json:"name"`
			} `json:"mark"`
			// CallID: the `attached` mark names the call the gateway took the stream for.
			CallID   string `json:"callId"`
			Transfer struct {
				To string `json:"to"`
			} `json:"transfer"`
			DTMF struct {
				Digit string `json:"digit"`
			} `json:"dtmf"`
			// Bridge names a transfer's leg to join to this call (join.go).
			Bridge struct {
				CallID string `json:"callId"`
			} `json:"bridge"`
		}
		if json.Unmarshal(data, &message) != nil {
			continue
		}
		switch message.Event {
		case "media":
			payload, err := base64.StdEncoding.DecodeString(message.Media.Payload)
			if err == nil && len(payload) > 0 {
				s.incoming <- gatewayMessage{event: "media", payload: payload}
			}
		case "mark":
			s.incoming <- gatewayMessage{event: "mark", mark: message.Mark.Name, callID: message.CallID}
		case "clear":
			s.incoming <- gatewayMessage{event: "clear"}
		case "transfer":
			s.incoming <- gatewayMessage{event: "transfer", transferTo: message.Transfer.To}
		case "bridge":
			if message.Bridge.CallID != "" {
				s.incoming <- gatewayMessage{event: "bridge", callID: message.Bridge.CallID}
			}
		case "dtmf":
			if key, ok := keypadKey(message.DTMF.Digit); ok {
				s.incoming <- gatewayMessage{event: "dtmf", digit: key}
			}
		}
	}
}

// sendAudio sends 20 ms of the caller's μ-law audio.
func (s *streamClient) sendAudio(ulaw []byte) {
	s.chunk++
	s.send(map[string]any{
		"event": "media",
		"media": map[string]any{
			"track":     "inbound",
			"chunk":     strconv.Itoa(s.chunk),
			"timestamp": strconv.Itoa((s.chunk - 1) * 20),
			"payload":   base64.StdEncoding.EncodeToString(ulaw),
		},
	})
}

// sendKey tells the gateway the far end pressed `key` (Twilio's `dtmf` message).
func (s *streamClient) sendKey(key string) {
	s.send(map[string]any{"event": "dtmf", "dtmf": map[string]any{"track": "inbound_track", "digit": key}})
}

// echoMark tells the gateway that the audio before mark `name` has played.
func (s *streamClient) echoMark(name string) {
	s.send(map[string]any{"event": "mark", "mark": map[string]any{"name": name}})
}

// stop: the caller hung up; the socket closes after it.
func (s *streamClient) stop() {
	s.send(map[string]any{"event": "stop"})
	s.close()
}

func (s *streamClient) close() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = s.conn.Close()
}

func (s *streamClient) send(message map[string]any) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.sequence++
	message["sequenceNumber"] = strconv.Itoa(s.sequence)
	message["streamSid"] = s.streamSid
	_ = s.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = s.conn.WriteJSON(message)
}
