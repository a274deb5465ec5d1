package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Settings of the SIP side (../spec/voice-media-v1.md section 6), read from the environment the
// way lib/settings.ts reads the service's: the same names, the same defaults.
type config struct {
	listenHost string
	listenPort int
	publicHost string
	trunk      string // SIP_TRUNK_URI; empty: no outbound calls
	username   string
	password   string
	rtpFirst   int
	rtpLast    int
	// controlAddr: SIP_CONTROL_LISTEN, where the control API (dial, release) listens: loopback at
	// SIP_CONTROL_URL's port unless the operator names an address (compose: the sip host).
	controlAddr string
	gateway     string // MEDIA_GATEWAY_URL: the media gateway's public URL (http://HOST:MEDIA_PORT) for calls that come in
	token       string // MEDIA_STREAMS_TOKEN: opens the streams of calls that come in, nothing else
	// callbackToken: MEDIA_CONTROL_TOKEN, what its status callbacks present at the gateway's control port.
	callbackToken string
	// controlURL: MEDIA_CONTROL_URL, the gateway's control port for the callbacks of calls that came
	// in (a placed call's dial names its own); default MEDIA_GATEWAY_URL's host at the next port.
	controlURL string
	// gateways: MEDIA_GATEWAY_URLS (each one's control port the next); empty: the one above. The
	// gateways a call that comes in may go to, one that is not draining (gateways.go).
	gateways []gatewayAddress
	// transferMax: TRANSFER_MAX_MINUTES, how long a bridged transfer leg may last.
	transferMax time.Duration
	// controlToken: SIP_CONTROL_TOKEN, the control API's own secret (dial, release).
	controlToken string
	rtpSilence   time.Duration
	// trusted: SIP_TRUSTED_SOURCES, the only sources served (unset: loopback only).
	trusted trustedSources
	// invitesPerSecond: SIP_INVITES_PER_SECOND, INVITEs served per second per source.
	invitesPerSecond int
}

func loadConfig() (config, error) {
	c := config{
		trunk:    os.Getenv("SIP_TRUNK_URI"),
		username: os.Getenv("SIP_USERNAME"),
		password: os.Getenv("SIP_PASSWORD"),

		gateway: os.Getenv("MEDIA_GATEWAY_URL"),
		token:   os.Getenv("MEDIA_STREAMS_TOKEN"),
	}
	var err error
	if c.callbackToken, err = secretEnv("MEDIA_CONTROL_TOKEN"); err != nil {
		return c, err
	}
	control, err := url.Parse(envOr("SIP_CONTROL_URL", "http://127.0.0.1:8092"))
	if err != nil || control.Host == "" {
		return c, fmt.Errorf("SIP_CONTROL_URL must be http://HOST:PORT")
	}
	if c.controlAddr, err = controlListen(control, os.Getenv("SIP_CONTROL_LISTEN")); err != nil {
		return c, err
	}
	// Loopback by default: a public address is a choice made together with SIP_TRUSTED_SOURCES.
	host, port, err := net.SplitHostPort(envOr("SIP_LISTEN", "127.0.0.1:5060"))
	if err != nil {
		return c, fmt.Errorf("SIP_LISTEN: %w", err)
	}
	if c.listenPort, err = strconv.Atoi(port); err != nil || c.listenPort < 0 || c.listenPort > 65535 {
		return c, fmt.Errorf("SIP_LISTEN: bad port %q", port)
	}
	c.listenHost = host
	c.trusted = loopbackOnly
	if text := os.Getenv("SIP_TRUSTED_SOURCES"); text != "" {
		if c.trusted, err = parseTrustedSources(text); err != nil {
			return c, err
		}
	} else if !isLoopbackHost(host) {
		return c, fmt.Errorf("SIP_LISTEN %s is not a loopback address: set SIP_TRUSTED_SOURCES to your trunk's signalling addresses (IPs or CIDRs), or anyone on the network could place calls", net.JoinHostPort(host, port))
	}
	if c.invitesPerSecond, err = strconv.Atoi(envOr("SIP_INVITES_PER_SECOND", "20")); err != nil || c.invitesPerSecond < 1 {
		return c, fmt.Errorf("SIP_INVITES_PER_SECOND must be a whole number of at least 1")
	}
	c.publicHost = envOr("SIP_PUBLIC_HOST", host)
	if c.rtpFirst, c.rtpLast, err = portRange(envOr("RTP_PORTS", "20000-20999")); err != nil {
		return c, err
	}
	silence, err := strconv.Atoi(envOr("SIP_RTP_TIMEOUT_MS", "10000"))
	if err != nil || silence <= 0 {
		return c, fmt.Errorf("SIP_RTP_TIMEOUT_MS must be a positive number of milliseconds")
	}
	c.rtpSilence = time.Duration(silence) * time.Millisecond
	if c.gateway == "" || c.token == "" || c.callbackToken == "" {
		return c, fmt.Errorf("MEDIA_GATEWAY_URL, MEDIA_STREAMS_TOKEN and MEDIA_CONTROL_TOKEN are needed (npm start sets them)")
	}
	if c.controlURL, err = mediaControlURL(c.gateway, os.Getenv("MEDIA_CONTROL_URL")); err != nil {
		return c, err
	}
	if c.gateways, err = gatewayList(os.Getenv("MEDIA_GATEWAY_URLS")); err != nil {
		return c, err
	}
	minutes, err := strconv.ParseFloat(envOr("TRANSFER_MAX_MINUTES", "60"), 64)
	if err != nil || minutes <= 0 || minutes > 24*60 {
		return c, fmt.Errorf("TRANSFER_MAX_MINUTES must be a number of minutes above 0, at most 1440")
	}
	c.transferMax = time.Duration(minutes * float64(time.Minute))
	if c.controlToken, err = secretEnv("SIP_CONTROL_TOKEN"); err != nil {
		return c, err
	}
	if c.controlToken == "" {
		return c, fmt.Errorf("SIP_CONTROL_TOKEN is needed: the control API's own secret (npm start generates and keeps it)")
	}
	if c.controlToken == c.token || c.controlToken == c.callbackToken {
		return c, fmt.Errorf("SIP_CONTROL_TOKEN must differ from MEDIA_STREAMS_TOKEN and MEDIA_CONTROL_TOKEN: one secret opens one door")
	}
	return c, nil
}

// mediaControlURL is MEDIA_CONTROL_URL, else the gateway's control port as the service derives it
// by default: MEDIA_GATEWAY_URL's host at the next port (MEDIA_CONTROL_LISTEN's default).
func mediaControlURL(gateway, given string) (string, error) {
	if given != "" {
		return strings.TrimRight(given, "/"), nil
	}
	u, err := url.Parse(gateway)
	if err != nil || u.Port() == "" {
		return "", fmt.Errorf("MEDIA_CONTROL_URL is needed when MEDIA_GATEWAY_URL (%q) names no port", gateway)
	}
	port, _ := strconv.Atoi(u.Port())
	return fmt.Sprintf("http://%s", net.JoinHostPort(u.Hostname(), strconv.Itoa(port+1))), nil
}

// secretEnv is secret `name`, else the contents of the file `<name>_FILE` names (compose keeps the
// control tokens it generates in a volume), else empty.
func secretEnv(name string) (string, error) {
	if value := os.Getenv(name); value != "" {
		return value, nil
	}
	file := os.Getenv(name + "_FILE")
	if file == "" {
		return "", nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s_FILE: %w", name, err)
	}
	value := strings.TrimSpace(string(data))
	if value == "" {
		return "", fmt.Errorf("%s_FILE: %s is empty", name, file)
	}
	return value, nil
}

// controlListen is SIP_CONTROL_LISTEN, else loopback at SIP_CONTROL_URL's port: the control API
// dials through the trunk, so it is never on every interface unless the operator says so.
func controlListen(controlURL *url.URL, given string) (string, error) {
	if given != "" {
		if _, port, err := net.SplitHostPort(given); err != nil || port == "" {
			return "", fmt.Errorf("SIP_CONTROL_LISTEN must be HOST:PORT (got %q)", given)
		}
		return given, nil
	}
	port := controlURL.Port()
	if port == "" {
		return "", fmt.Errorf("SIP_CONTROL_URL must name a port (got %q)", controlURL.String())
	}
	return net.JoinHostPort("127.0.0.1", port), nil
}

// portRange reads RTP_PORTS, `FIRST-LAST`: RTP and RTCP take a pair each, so at least two ports.
func portRange(text string) (int, int, error) {
	first, last, found := strings.Cut(text, "-")
	a, errA := strconv.Atoi(strings.TrimSpace(first))
	b, errB := strconv.Atoi(strings.TrimSpace(last))
	if !found || errA != nil || errB != nil || a < 1 || b > 65535 || b <= a {
		return 0, 0, fmt.Errorf("RTP_PORTS must be FIRST-LAST, e.g. 20000-20999 (got %q)", text)
	}
	return a, b, nil
}

func envOr(name, fallback string) string {
	if value, ok := os.LookupEnv(name); ok && value != "" {
		return value
	}
	return fallback
}
