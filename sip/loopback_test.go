package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/gorilla/websocket"
)

// The loopback harness of the SIP tests: the SIP side under test (newSidecar, as run builds it) on
// a free UDP port of 127.0.0.1, far ends (a trunk, a caller, a transfer target) that are diago
// user agents of their own on other free ports, and a fake media gateway (its Media Streams socket
// and its control port's carrier callbacks) on httptest.

// within bounds every wait of these tests: on loopback everything they wait for takes milliseconds.
const within = 3 * time.Second

const (
	testStreamsToken = "streams-secret"
	testControlToken = "control-secret"
	testSIPToken     = "sip-secret"
)

// quietLog is the tests' logger: it drops everything.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// sipgo's and diago's own default loggers too, before any test reads them.
func init() {
	sip.SetDefaultLogger(quietLog())
	media.SetDefaultLogger(quietLog())
}

// ---- the fake media gateway ----

type fakeGateway struct {
	server    *httptest.Server
	streams   chan *gatewayStream
	callbacks chan gatewayCallback
	mu        sync.Mutex
	conns     []*websocket.Conn
}

// gatewayCallback is one carrier callback the SIP side posted.
type gatewayCallback struct {
	callID string
	auth   string
	body   map[string]any
}

// gatewayStream is the gateway's side of one Media Streams socket the SIP side opened.
type gatewayStream struct {
	conn    *websocket.Conn
	params  map[string]string // the `start` message's customParameters
	events  chan map[string]any
	writeMu sync.Mutex
}

func newFakeGateway(t *testing.T) *fakeGateway {
	t.Helper()
	g := &fakeGateway{streams: make(chan *gatewayStream, 8), callbacks: make(chan gatewayCallback, 32)}
	upgrader := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+streamsPath, func(w http.ResponseWriter, r *http.Request) {
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		g.mu.Lock()
		g.conns = append(g.conns, conn)
		g.mu.Unlock()
		stream := &gatewayStream{conn: conn, events: make(chan map[string]any, 4096)}
		for stream.params == nil {
			var message struct {
				Event string `json:"event"`
				Start struct {
					CustomParameters map[string]string `json:"customParameters"`
				} `json:"start"`
			}
			if conn.ReadJSON(&message) != nil {
				return
			}
			if message.Event == "start" {
				stream.params = message.Start.CustomParameters
			}
		}
		g.streams <- stream
		defer close(stream.events)
		for {
			var message map[string]any
			if conn.ReadJSON(&message) != nil {
				return
			}
			select {
			case stream.events <- message:
			default: // a test that stopped listening
			}
		}
	})
	mux.HandleFunc("POST /media/carrier/calls/{callId}/callback", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		g.callbacks <- gatewayCallback{callID: r.PathValue("callId"), auth: r.Header.Get("authorization"), body: body}
		w.WriteHeader(http.StatusNoContent)
	})
	g.server = httptest.NewServer(mux)
	t.Cleanup(func() {
		g.mu.Lock()
		for _, conn := range g.conns {
			_ = conn.Close()
		}
		g.mu.Unlock()
		g.server.Close()
	})
	return g
}

func (g *fakeGateway) url() string        { return g.server.URL }
func (g *fakeGateway) streamsURL() string { return streamsURL(g.server.URL) }

// nextStream is the next stream the SIP side opened.
func (g *fakeGateway) nextStream(t *testing.T) *gatewayStream {
	t.Helper()
	select {
	case stream := <-g.streams:
		return stream
	case <-time.After(within):
		t.Fatal("the SIP side opened no stream at the gateway")
		return nil
	}
}

// noStream checks that no stream was opened.
func (g *fakeGateway) noStream(t *testing.T) {
	t.Helper()
	select {
	case stream := <-g.streams:
		t.Fatalf("a stream was opened: %v", stream.params)
	default:
	}
}

// nextCallback is the next carrier callback, checked to carry the control token.
func (g *fakeGateway) nextCallback(t *testing.T) gatewayCallback {
	t.Helper()
	select {
	case callback := <-g.callbacks:
		if callback.auth != "Bearer "+testControlToken {
			t.Errorf("callback %v presented %q", callback.body, callback.auth)
		}
		return callback
	case <-time.After(within):
		t.Fatal("no carrier callback came")
		return gatewayCallback{}
	}
}

// expectCallbacks checks the next callbacks' types, in order, all of call `callID`.
func (g *fakeGateway) expectCallbacks(t *testing.T, callID string, types ...string) {
	t.Helper()
	for _, want := range types {
		callback := g.nextCallback(t)
		if callback.callID != callID || callback.body["type"] != want {
			t.Fatalf("callback %s %v, want %s %s", callback.callID, callback.body, callID, want)
		}
	}
}

// noCallback checks that no (further) callback came.
func (g *fakeGateway) noCallback(t *testing.T) {
	t.Helper()
	select {
	case callback := <-g.callbacks:
		t.Fatalf("an unexpected callback: %s %v", callback.callID, callback.body)
	default:
	}
}

func (s *gatewayStream) write(message map[string]any) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_ = s.conn.WriteJSON(message)
}

// attach takes the stream, as the gateway does once the Call is recorded.
func (s *gatewayStream) attach(callID string) {
	s.write(map[string]any{"event": "mark", "mark": map[string]any{"name": "attached"}, "callId": callID})
}

func (s *gatewayStream) media(payload []byte) {
	s.write(map[string]any{"event": "media", "media": map[string]any{"payload": base64.StdEncoding.EncodeToString(payload)}})
}

func (s *gatewayStream) mark(name string) {
	s.write(map[string]any{"event": "mark", "mark": map[string]any{"name": name}})
}

func (s *gatewayStream) clear() { s.write(map[string]any{"event": "clear"}) }

// transferTo asks for a transfer as the gateway does with a client that reports its outcome
// (`transfer: report` in its `start`): the typed `transfer` event, and the stream stays open.
func (s *gatewayStream) transferTo(target string) {
	s.write(map[string]any{"event": "transfer", "streamSid": "MZtest", "transfer": map[string]any{"to": target}})
}

// expectTransferReport checks the next callback is call `callID`'s transfer outcome: `failure`
// "" for transfer_connected, else transfer_failed with it.
func (g *fakeGateway) expectTransferReport(t *testing.T, callID, failure string) {
	t.Helper()
	callback := g.nextCallback(t)
	want := map[string]any{"type": "transfer_connected"}
	if failure != "" {
		want = map[string]any{"type": "transfer_failed", "failure": failure}
	}
	if callback.callID != callID || fmt.Sprint(callback.body) != fmt.Sprint(want) {
		t.Fatalf("callback %s %v, want %s %v", callback.callID, callback.body, callID, want)
	}
}

// closeWith closes the socket with a reason, as the gateway does when it refuses a call, the
// agent hangs up (""), or after a transfer (transferTo).
func (s *gatewayStream) closeWith(reason string) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, reason), time.Now().Add(time.Second))
	_ = s.conn.Close()
}

// nextEvent is the next message of type `event` from the SIP side (others are skipped); false when
// the socket closed first.
func (s *gatewayStream) nextEvent(t *testing.T, event string) (map[string]any, bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case message, open := <-s.events:
			if !open {
				return nil, false
			}
			if message["event"] == event {
				return message, true
			}
		case <-deadline:
			t.Fatalf("no %q from the SIP side", event)
			return nil, false
		}
	}
}

// heard is the audio of the next `media` message.
func (s *gatewayStream) heard(t *testing.T) []byte {
	t.Helper()
	message, ok := s.nextEvent(t, "media")
	if !ok {
		t.Fatal("the stream closed before any audio")
	}
	payload, _ := message["media"].(map[string]any)["payload"].(string)
	audio, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	return audio
}

// stopped waits for the SIP side's `stop` and the socket's close.
func (s *gatewayStream) stopped(t *testing.T) {
	t.Helper()
	if _, ok := s.nextEvent(t, "stop"); !ok {
		t.Fatal("the stream closed without a stop")
	}
	select {
	case <-drain(s.events):
	case <-time.After(within):
		t.Fatal("the stream stayed open after its stop")
	}
}

// drain reads a channel to its close.
func drain[T any](events <-chan T) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range events {
		}
		close(done)
	}()
	return done
}

// ---- the SIP side under test ----

type testSidecar struct {
	*sidecar
	port    int // its SIP port on 127.0.0.1
	control *httptest.Server
}

// startSidecar serves a SIP side on a free port of 127.0.0.1; its trunk is `trunk` (nil: none).
func startSidecar(t *testing.T, gateway *fakeGateway, trunk *farEnd, tweak func(*config)) *testSidecar {
	t.Helper()
	cfg := config{
		listenHost: "127.0.0.1", publicHost: "127.0.0.1",
		gateway: gateway.url(), token: testStreamsToken, callbackToken: testControlToken, controlURL: gateway.url(),
		// An RTP timeout well beyond every wait here, so that it never ends a call a test expects
		// ended otherwise (TestRTPTimeoutHangsUp sets its own).
		controlToken: testSIPToken, transferMax: time.Minute, rtpSilence: 10 * within,
		trusted: loopbackOnly, invitesPerSecond: 100,
	}
	if trunk != nil {
		cfg.trunk = fmt.Sprintf("sip:127.0.0.1:%d", trunk.port)
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := newSidecar(cfg, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.dg.ServeBackground(ctx, s.serveInbound); err != nil {
		t.Fatal(err)
	}
	control := httptest.NewServer(s.controlHandler())
	t.Cleanup(func() {
		control.Close()
		cancel()
		_ = s.ua.Close()
	})
	return &testSidecar{sidecar: s, port: listenPort(t, s.ua), control: control}
}

// listenPort is the UDP port `ua` serves on. sipgo reports it ready (ServeBackground returns) a
// moment before its transport layer lists the port, hence the wait.
func listenPort(t *testing.T, ua *sipgo.UserAgent) int {
	t.Helper()
	var ports []int
	eventually(t, "listening on a UDP port", func() bool {
		ports = ua.TransportLayer().ListenPorts("udp")
		return len(ports) == 1 && ports[0] != 0
	})
	return ports[0]
}

// uri is a SIP URI of `user` at the SIP side.
func (s *testSidecar) uri(user string) sip.Uri {
	return sip.Uri{User: user, Host: "127.0.0.1", Port: s.port}
}

// post calls the control API with its token.
func (s *testSidecar) post(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	status, answer := s.request(t, http.MethodPost, path, testSIPToken, body)
	if status != http.StatusOK {
		t.Fatalf("POST %s: %d %v", path, status, answer)
	}
	return answer
}

func (s *testSidecar) request(t *testing.T, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		encoded, _ := json.Marshal(body)
		reader = bytes.NewReader(encoded)
	}
	req, _ := http.NewRequest(method, s.control.URL+path, reader)
	if token != "" {
		req.Header.Set("authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var answer map[string]any
	_ = json.NewDecoder(res.Body).Decode(&answer)
	return res.StatusCode, answer
}

// dial asks the SIP side to place call `callID` to `to`, its audio to `gateway`'s streams.
func (s *testSidecar) dial(t *testing.T, gateway *fakeGateway, callID, to string) bool {
	t.Helper()
	answer := s.post(t, "/calls/"+callID+"/dial", map[string]any{
		"to": to, "from": "+4721000042", "ringTimeoutSeconds": 30,
		"gateway": gateway.url(), "streamsUrl": gateway.streamsURL(), "streamToken": "call-token-" + callID[:8],
	})
	return answer["dialing"] == true
}

// idle waits until no call is placed or answered (the counts /healthz reports).
func (s *testSidecar) idle(t *testing.T) {
	t.Helper()
	eventually(t, "the SIP side holds no call", func() bool {
		placed, answered := s.counts()
		return placed == 0 && answered == 0
	})
}

func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !check(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not so: %s", what)
		}
	}
}

// ---- far ends: trunks, callers, transfer targets ----

type farEnd struct {
	dg   *diago.Diago
	ua   *sipgo.UserAgent
	port int
	// seen: the requests that reached it, in order.
	seen chan seenRequest
	// referStatus answers a REFER in place of diago (0: diago's own, a refusal).
	referStatus atomic.Int32
	// takesRefer: the calls it places take a REFER as a phone does: they call the target and
	// report its answer in NOTIFYs (diago's own REFER handling). Otherwise they refuse it.
	takesRefer bool
}

type seenRequest struct {
	method        string
	user          string // the request-URI's
	fromUser      string
	fromHost      string
	referTo       string
	authorization string
}

// farCall is a call at a far end, either way.
type farCall struct {
	dialog interface {
		Context() context.Context
		Hangup(ctx context.Context) error
	}
	media *diago.DialogMedia
}

// startFarEnd serves a far end on a free port of 127.0.0.1, speaking `codecs` (nil: PCMU and
// PCMA), its calls that come in served by `serve`.
func startFarEnd(t *testing.T, codecs []media.Codec, serve func(d *diago.DialogServerSession)) *farEnd {
	t.Helper()
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("far-end"))
	if err != nil {
		t.Fatal(err)
	}
	f := &farEnd{ua: ua, seen: make(chan seenRequest, 64)}
	if codecs == nil {
		codecs = []media.Codec{media.CodecAudioUlaw, media.CodecAudioAlaw}
	}
	f.dg = diago.NewDiago(ua,
		diago.WithLogger(quietLog()),
		diago.WithTransport(diago.Transport{Transport: "udp", BindHost: "127.0.0.1"}),
		diago.WithMediaConfig(diago.MediaConfig{Codecs: codecs}),
		diago.WithServerRequestMiddleware(func(next sipgo.RequestHandler) sipgo.RequestHandler {
			return func(req *sip.Request, tx sip.ServerTransaction) {
				seen := seenRequest{method: req.Method.String(), user: req.Recipient.User}
				if from := req.From(); from != nil {
					seen.fromUser, seen.fromHost = from.Address.User, from.Address.Host
				}
				if header := req.GetHeader("Refer-To"); header != nil {
					seen.referTo = header.Value()
				}
				if header := req.GetHeader("Authorization"); header != nil {
					seen.authorization = header.Value()
				}
				select {
				case f.seen <- seen:
				default:
				}
				if status := int(f.referStatus.Load()); req.Method == sip.REFER && status != 0 {
					_ = tx.Respond(sip.NewResponseFromRequest(req, status, "", nil))
					return
				}
				next(req, tx)
			}
		}),
	)
	if serve == nil {
		serve = func(d *diago.DialogServerSession) { _ = d.Respond(sip.StatusForbidden, "Forbidden", nil) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.dg.ServeBackground(ctx, serve); err != nil {
		t.Fatal(err)
	}
	f.port = listenPort(t, ua)
	t.Cleanup(func() {
		cancel()
		_ = ua.Close()
	})
	return f
}

// nextRequest is the next request of `method` that reached the far end (others are skipped).
func (f *farEnd) nextRequest(t *testing.T, method sip.RequestMethod) seenRequest {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case seen := <-f.seen:
			if seen.method == method.String() {
				return seen
			}
		case <-deadline:
			t.Fatalf("no %s reached the far end", method)
			return seenRequest{}
		}
	}
}

// count is how many requests of `method` reached it so far (those seen are used up).
func (f *farEnd) count(method sip.RequestMethod) int {
	n := 0
	for {
		select {
		case seen := <-f.seen:
			if seen.method == method.String() {
				n++
			}
		default:
			return n
		}
	}
}

// ring answers 100 and 180, and lets it ring a moment: sipgo handles each response on its own
// goroutine, so a 180 sent together with the final answer may arrive after it, and be dropped.
func ring(d *diago.DialogServerSession) {
	_ = d.Trying()
	_ = d.Ringing()
	time.Sleep(20 * time.Millisecond)
}

// answering serves calls by answering them (after a 180) and handing them to the test on `calls`;
// each lasts until it is hung up.
func answering(calls chan<- farCall) func(d *diago.DialogServerSession) {
	return func(d *diago.DialogServerSession) {
		ring(d)
		med, err := d.Answer(diago.AnswerOptions{})
		if err != nil {
			return
		}
		calls <- farCall{dialog: d, media: med}
		<-d.Context().Done()
	}
}

// callReferred calls a REFER's target; diago NOTIFYs the referrer of the outcome (200 once
// answered, the target's final status when not).
func callReferred(referred *diago.DialogClientSession) error {
	if _, err := referred.Invite(referred.Context(), diago.InviteClientOptions{}); err != nil {
		return err
	}
	return referred.Ack(referred.Context())
}

// call places a call from the far end to `to` at the SIP side, caller `from`, with `headers`.
func (f *farEnd) call(ctx context.Context, s *testSidecar, to, from string, headers ...sip.Header) (farCall, error) {
	dialog, err := f.dg.NewDialog(s.uri(to), diago.NewDialogOptions{})
	if err != nil {
		return farCall{}, err
	}
	options := diago.InviteClientOptions{Headers: headers}
	options.WithCaller("", from, "127.0.0.1")
	if f.takesRefer {
		options.OnRefer = callReferred
	}
	med, err := dialog.Invite(ctx, options)
	if err != nil {
		_ = dialog.Close()
		return farCall{}, err
	}
	if err := dialog.Ack(ctx); err != nil {
		_ = dialog.Close()
		return farCall{}, err
	}
	context.AfterFunc(dialog.Context(), func() { _ = dialog.Close() })
	return farCall{dialog: dialog, media: med}, nil
}

// callAnswered places a call from the far end that the gateway takes: it answers `stream`
// (attached as Call `callID`) and the call, answered.
func (f *farEnd) callAnswered(t *testing.T, s *testSidecar, gateway *fakeGateway, callID string) (farCall, *gatewayStream) {
	t.Helper()
	answered := make(chan error, 1)
	var call farCall
	go func() {
		var err error
		call, err = f.call(context.Background(), s, "4721000042", "+4799999999")
		answered <- err
	}()
	stream := gateway.nextStream(t)
	stream.attach(callID)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the call was not answered: %v", err)
		}
	case <-time.After(within):
		t.Fatal("the call was not answered")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		_ = call.dialog.Hangup(ctx) // a call the test left up
	})
	// The SIP side counts it live once the ACK came: from then on it is in its bridge.
	eventually(t, "the answered call is live", func() bool { _, answered := s.counts(); return answered == 1 })
	return call, stream
}

// inviteStatus is the final answer behind a far end's failed call (its error), 200 when answered.
func inviteStatus(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 200
	}
	res, ok := dialogResponse(err)
	if !ok {
		t.Fatalf("no answer: %v", err)
	}
	return res.StatusCode
}

// ended waits for the far end's call to end (a BYE or CANCEL reached it, or it sent one).
func (c farCall) ended(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.dialog.Context().Done():
	case <-time.After(within):
		t.Fatalf("the far end's call did not end: %s", what)
	}
}

// nextCall is the next call answered at a far end.
func nextCall(t *testing.T, calls <-chan farCall) farCall {
	t.Helper()
	select {
	case call := <-calls:
		return call
	case <-time.After(within):
		t.Fatal("no call was answered at the far end")
		return farCall{}
	}
}

// ---- audio ----

// frame is 20 ms of one byte.
func frame(b byte) []byte { return bytes.Repeat([]byte{b}, frameBytes) }

// hears reads the call's audio at the far end until a frame satisfies `want`.
func (c farCall) hears(t *testing.T, what string, want func([]byte) bool) {
	t.Helper()
	reader, err := c.media.AudioReader()
	if err != nil {
		t.Fatal(err)
	}
	found := make(chan bool, 1)
	go func() {
		buf := make([]byte, media.RTPBufSize)
		for {
			n, err := reader.Read(buf)
			if err != nil {
				found <- false
				return
			}
			if n > 0 && want(buf[:n]) {
				found <- true
				return
			}
		}
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("the far end's audio ended before %s", what)
		}
	case <-time.After(within):
		t.Fatalf("the far end never heard %s", what)
	}
}

// speaks plays `frames` at the far end, at the RTP clock, in the background.
func (c farCall) speaks(t *testing.T, frames ...[]byte) {
	t.Helper()
	writer, err := c.media.AudioWriter()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for _, f := range frames {
			if _, err := writer.Write(f); err != nil {
				return
			}
		}
	}()
}

// rtpSender sends hand-made RTP packets to where the SIP side receives the call's audio, so a
// test chooses their sequence numbers and their order.
type rtpSender struct {
	conn *net.UDPConn
	ssrc uint32
}

func newRTPSender(t *testing.T, c farCall) *rtpSender {
	t.Helper()
	remote := c.media.MediaSession().Raddr
	conn, err := net.DialUDP("udp", nil, &remote)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &rtpSender{conn: conn, ssrc: 0x5eed}
}

// send sends PCMU packet `seq` carrying `payload`.
func (r *rtpSender) send(t *testing.T, seq uint16, payload []byte) {
	t.Helper()
	header := make([]byte, 12)
	header[0] = 0x80 // version 2
	header[1] = 0    // PCMU
	binary.BigEndian.PutUint16(header[2:], seq)
	binary.BigEndian.PutUint32(header[4:], uint32(seq)*frameBytes)
	binary.BigEndian.PutUint32(header[8:], r.ssrc)
	if _, err := r.conn.Write(append(header, payload...)); err != nil {
		t.Fatal(err)
	}
}

// repeated is `n` frames of the same audio, one second for 50.
func repeated(audio []byte, n int) [][]byte {
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = audio
	}
	return frames
}

// isFrameOf says whether audio is a whole frame of byte b.
func isFrameOf(b byte) func([]byte) bool {
	return func(audio []byte) bool { return bytes.Equal(audio, frame(b)) }
}

// describe names audio in a failure message: 160×0xff, not 160 bytes of it.
func describe(audio []byte) string {
	if len(audio) == 0 {
		return "nothing"
	}
	if bytes.Equal(audio, bytes.Repeat(audio[:1], len(audio))) {
		return fmt.Sprintf("%d×%#x", len(audio), audio[0])
	}
	return fmt.Sprintf("%d bytes %x…", len(audio), audio[:min(8, len(audio))])
}

// rawClient sends hand-made requests from a user agent of its own (an ephemeral port of loopback).
func rawClient(t *testing.T) *sipgo.Client {
	t.Helper()
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("raw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ua.Close() })
	client, err := sipgo.NewClient(ua, sipgo.WithClientHostname("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// waitClosed waits for `done` to close.
func waitClosed(t *testing.T, done <-chan struct{}, failure string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(within):
		t.Fatal(failure)
	}
}
