// The SIP side of CARRIER=sip (../spec/voice-media-v1.md section 6): the service's SIP user agent
// on sipgo/diago. It takes calls that come in and places the calls the service makes through the
// trunk, and bridges each call's RTP to the media gateway as a Media Streams client, so the
// gateway holds SIP calls exactly like Twilio's. `npm start` and `npm run start:cluster` build,
// start and supervise it (scripts/sip-side.ts); its settings are the service's environment.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

type sidecar struct {
	cfg       config
	dg        *diago.Diago
	ua        *sipgo.UserAgent // its transports: the port it listens on (SIP_LISTEN's, or a free one)
	trunk     sip.Uri
	callbacks *callbacks
	// placement: the media gateway of each call that comes in (gateways.go).
	placement *gatewayPlacement
	log       *slog.Logger

	mu      sync.Mutex
	calls   map[string]*placedCall
	dialled map[string]time.Time
	// live holds every answered call, both ways, until it is over: hung up when the SIP side stops.
	live map[liveDialog]struct{}
	// inbound holds the Call-IDs of INVITEs being served: a second INVITE of one (not a
	// retransmission, which the transaction layer absorbs) is a merged request, not a second call.
	inbound map[string]struct{}
	// keypads holds the leg of every answered call by its SIP dialog ID, for the keys its INFO
	// requests carry (info.go), until the leg is over.
	keypads map[string]*leg

	// Who may reach it (guard.go): the trusted sources, each source's INVITE rate, the refusals.
	trusted trustedSources
	invites *inviteLimiter
	refused refusalCounts
}

// claimInbound takes a Call-ID for one INVITE; false when another INVITE of it is being served.
func (s *sidecar) claimInbound(callID string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.inbound[callID]; taken {
		return nil, false
	}
	s.inbound[callID] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.inbound, callID)
	}, true
}

// counts: calls placed and not over (ringing or answered), and answered calls both ways.
func (s *sidecar) counts() (placed, answered int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls), len(s.live)
}

func (s *sidecar) track(dialog liveDialog, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.live[dialog] = struct{}{}
	} else {
		delete(s.live, dialog)
	}
}

// hangUpAll ends the live calls with a BYE when the SIP side stops: their streams close with the
// process, and the gateway and the call workflows complete them as caller hang-ups.
func (s *sidecar) hangUpAll() {
	s.mu.Lock()
	dialogs := make([]liveDialog, 0, len(s.live))
	for dialog := range s.live {
		dialogs = append(dialogs, dialog)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, dialog := range dialogs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			_ = dialog.Hangup(ctx)
		}()
	}
	wg.Wait()
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: logLevel()})).With("service", "sip")
	if err := run(log); err != nil {
		log.Error("the SIP side stopped", "error", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	s, err := newSidecar(cfg, log)
	if err != nil {
		return err
	}
	media.RTPPortStart, media.RTPPortEnd = cfg.rtpFirst, cfg.rtpLast

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	listener, err := net.Listen("tcp", cfg.controlAddr)
	if err != nil {
		return fmt.Errorf("SIP_CONTROL_LISTEN %s: %w", cfg.controlAddr, err)
	}
	control := &http.Server{Handler: s.controlHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = control.Serve(listener) }()
	defer control.Close()

	if err := s.dg.ServeBackground(ctx, s.serveInbound); err != nil {
		return err
	}
	log.Info("SIP side running",
		"sip", "udp://"+net.JoinHostPort(cfg.publicHost, strconv.Itoa(cfg.listenPort)),
		"control", "http://"+listener.Addr().String(),
		"rtpPorts", fmt.Sprintf("%d-%d", cfg.rtpFirst, cfg.rtpLast),
		"trunk", cfg.trunk,
		"trustedSources", cfg.trusted.String(),
		"pid", os.Getpid())
	<-ctx.Done()
	_, answered := s.counts()
	log.Info("SIP side stopping", "calls", answered)
	s.hangUpAll()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}

// newSidecar builds the SIP side from its settings, guard and all, not yet serving: run serves it
// on SIP_LISTEN, the tests on a free loopback port against a far end of their own.
func newSidecar(cfg config, log *slog.Logger) (*sidecar, error) {
	s := &sidecar{
		cfg: cfg, log: log,
		calls: map[string]*placedCall{}, dialled: map[string]time.Time{}, live: map[liveDialog]struct{}{}, inbound: map[string]struct{}{},
		keypads: map[string]*leg{},
		trusted: cfg.trusted, invites: newInviteLimiter(cfg.invitesPerSecond),
	}
	if cfg.trunk != "" {
		if err := sip.ParseUri(cfg.trunk, &s.trunk); err != nil {
			return nil, fmt.Errorf("SIP_TRUNK_URI: %w", err)
		}
	}
	s.callbacks = &callbacks{token: cfg.callbackToken, client: &http.Client{Timeout: 5 * time.Second}, log: log}
	gateways := cfg.gateways
	if len(gateways) == 0 {
		gateways = []gatewayAddress{{public: strings.TrimRight(cfg.gateway, "/"), control: cfg.controlURL}}
	}
	s.placement = newGatewayPlacement(gateways)

	ua, err := sipgo.NewUA(sipgo.WithUserAgent("voice-agent-sip"))
	if err != nil {
		return nil, err
	}
	s.ua = ua
	// Every request passes the guard first, those of methods nobody serves too (405 once trusted).
	server, err := sipgo.NewServer(ua, sipgo.WithServerLogger(log))
	if err != nil {
		return nil, err
	}
	server.OnNoRoute(s.guard(methodNotAllowed))
	s.dg = diago.NewDiago(ua,
		diago.WithLogger(log),
		diago.WithServer(server),
		diago.WithServerRequestMiddleware(s.guard),
		diago.WithTransport(diago.Transport{
			Transport:    "udp",
			BindHost:     cfg.listenHost,
			BindPort:     cfg.listenPort,
			ExternalHost: cfg.publicHost,
		}),
		// G.711 only: what a phone trunk speaks and the gateway's μ-law needs no resampling. And
		// RFC 4733 telephone-event/8000, for the keypad both ways; a far end that does not offer
		// it gets an answer without it, and keys as tones (dtmf.go).
		diago.WithMediaConfig(diago.MediaConfig{Codecs: []media.Codec{media.CodecAudioUlaw, media.CodecAudioAlaw, media.CodecTelephoneEvent8000}}),
	)
	// diago answers every INFO 406: keys sent as SIP INFO are served here instead (info.go),
	// behind the guard as every request is.
	server.OnInfo(s.guard(s.serveInfo))
	return s, nil
}

func logLevel() slog.Level {
	switch strings.ToLower(os.Getenv("LOG_LEVEL")) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
