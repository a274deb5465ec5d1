package main

import (
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
)

func TestTrustedSources(t *testing.T) {
	sources, err := parseTrustedSources(" 203.0.113.10, 198.51.100.0/24 ,2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{
		"203.0.113.10": true, "203.0.113.11": false,
		"198.51.100.7": true, "198.51.101.7": false,
		"2001:db8::5": true, "2001:db9::5": false,
		"::ffff:203.0.113.10": true,  // IPv4 seen through an IPv6 socket
		"127.0.0.1":           false, // once the trunk is named, loopback is not implied
	}
	for addr, want := range cases {
		if got := sources.allows(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: allowed %v, want %v", addr, got, want)
		}
	}
	for _, bad := range []string{"", " , ", "trunk.example.com", "203.0.113.0/33"} {
		if _, err := parseTrustedSources(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if !loopbackOnly.allows(netip.MustParseAddr("127.0.0.2")) || loopbackOnly.allows(netip.MustParseAddr("10.0.0.1")) {
		t.Error("unset, only loopback is served")
	}
}

func TestListenNeedsTrustedSources(t *testing.T) {
	baseEnv(t)
	t.Setenv("SIP_LISTEN", "")
	cfg, err := loadConfig()
	if err != nil || cfg.listenHost != "127.0.0.1" || cfg.listenPort != 5060 {
		t.Fatalf("default: %+v, %v", cfg, err)
	}
	if cfg.invitesPerSecond != 20 {
		t.Errorf("SIP_INVITES_PER_SECOND default: %d", cfg.invitesPerSecond)
	}
	for _, listen := range []string{"0.0.0.0:5060", "[::]:5060", "203.0.113.5:5060", "sip.example.com:5060"} {
		t.Setenv("SIP_LISTEN", listen)
		if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "SIP_TRUSTED_SOURCES") {
			t.Errorf("%s without SIP_TRUSTED_SOURCES: %v", listen, err)
		}
	}
	t.Setenv("SIP_LISTEN", "0.0.0.0:5060")
	t.Setenv("SIP_TRUSTED_SOURCES", "203.0.113.10")
	if cfg, err := loadConfig(); err != nil || !cfg.trusted.allows(netip.MustParseAddr("203.0.113.10")) {
		t.Errorf("with trusted sources: %v", err)
	}
	t.Setenv("SIP_INVITES_PER_SECOND", "0")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "SIP_INVITES_PER_SECOND") {
		t.Errorf("SIP_INVITES_PER_SECOND=0: %v", err)
	}
}

func TestControlTokenIsItsOwn(t *testing.T) {
	baseEnv(t)
	t.Setenv("SIP_CONTROL_TOKEN", "")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "SIP_CONTROL_TOKEN is needed") {
		t.Errorf("unset: %v", err)
	}
	t.Setenv("SIP_CONTROL_TOKEN", "token")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "must differ") {
		t.Errorf("the media token again: %v", err)
	}
}

func TestInviteLimiter(t *testing.T) {
	limiter := newInviteLimiter(3)
	flood := netip.MustParseAddr("203.0.113.10")
	other := netip.MustParseAddr("203.0.113.11")
	start := time.Unix(1_000, 0)
	for i := range 3 {
		if !limiter.allow(flood, start) {
			t.Fatalf("INVITE %d of the first second refused", i+1)
		}
	}
	if limiter.allow(flood, start) {
		t.Error("a fourth INVITE in the same second was served")
	}
	if !limiter.allow(other, start) {
		t.Error("another source shares the flood's limit")
	}
	if !limiter.allow(flood, start.Add(400*time.Millisecond)) {
		t.Error("a third of a second later one more is due")
	}
	if limiter.allow(flood, start.Add(450*time.Millisecond)) {
		t.Error("not two")
	}
}

func guardedSidecar(trusted trustedSources, perSecond int) *sidecar {
	return &sidecar{
		log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		trusted: trusted,
		invites: newInviteLimiter(perSecond),
	}
}

func request(method sip.RequestMethod, source string) *sip.Request {
	req := sip.NewRequest(method, sip.Uri{User: "4721000042", Host: "127.0.0.1"})
	req.SetSource(source)
	return req
}

func TestGuardRefusals(t *testing.T) {
	s := guardedSidecar(loopbackOnly, 2)
	now := time.Unix(2_000, 0)
	if reason, status, _ := s.refusal(request(sip.INVITE, "192.0.2.7:5060"), now); reason != "untrusted_source" || status != 403 {
		t.Errorf("a stranger: %s %d", reason, status)
	}
	if reason, status, _ := s.refusal(request(sip.OPTIONS, "192.0.2.7:5060"), now); reason != "untrusted_source" || status != 403 {
		t.Errorf("a stranger's OPTIONS: %s %d", reason, status)
	}
	for range 2 {
		if reason, _, _ := s.refusal(request(sip.INVITE, "127.0.0.1:5070"), now); reason != "" {
			t.Errorf("a trusted INVITE refused: %s", reason)
		}
	}
	if reason, status, _ := s.refusal(request(sip.INVITE, "127.0.0.1:5070"), now); reason != "rate_limited" || status != 503 {
		t.Errorf("the third INVITE of the second: %s %d", reason, status)
	}
	// Only INVITEs are limited: the BYE of a call in progress always gets through.
	if reason, _, _ := s.refusal(request(sip.BYE, "127.0.0.1:5070"), now); reason != "" {
		t.Errorf("a BYE refused: %s", reason)
	}
}

func TestRefusalMetrics(t *testing.T) {
	var counts refusalCounts
	var empty strings.Builder
	counts.writeMetrics(&empty)
	if !strings.Contains(empty.String(), `sip_requests_refused_total{reason="rate_limited"} 0`) {
		t.Errorf("both reasons from the start:\n%s", empty.String())
	}
	counts.add("untrusted_source")
	counts.add("untrusted_source")
	var text strings.Builder
	counts.writeMetrics(&text)
	want := "# HELP sip_requests_refused_total SIP requests refused before anything was recorded, by reason.\n" +
		"# TYPE sip_requests_refused_total counter\n" +
		"sip_requests_refused_total{reason=\"rate_limited\"} 0\n" +
		"sip_requests_refused_total{reason=\"untrusted_source\"} 2\n"
	if text.String() != want {
		t.Errorf("got\n%s", text.String())
	}
}

func TestCallerNumber(t *testing.T) {
	cases := []struct {
		asserted []string
		from     string
		want     string
	}{
		{[]string{`"Kari" <sip:+4791234567@trunk.example.com;user=phone>`}, "+4799999999", "+4791234567"},
		{[]string{`<tel:+4791234567>`}, "anonymous", "+4791234567"},
		{[]string{`<sip:anonymous@anonymous.invalid>, <tel:4791234567>`}, "", "+4791234567"},
		{nil, "4799999999", "+4799999999"},
		{[]string{`<sip:reception@pbx.example.com>`}, "+4799999999", "+4799999999"},
		{nil, "anonymous", ""},
	}
	for _, c := range cases {
		if got := callerNumber(c.asserted, c.from); got != c.want {
			t.Errorf("%v / %q: got %q, want %q", c.asserted, c.from, got, c.want)
		}
	}
}

func TestInviteLimiterForgetsQuietSources(t *testing.T) {
	limiter := newInviteLimiter(1)
	start := time.Unix(3_000, 0)
	for i := range 10_000 {
		limiter.allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), start)
	}
	// A minute later a new source arrives: the quiet ones are forgotten, not kept forever.
	limiter.allow(netip.MustParseAddr("192.0.2.1"), start.Add(2*forgetAfter))
	if len(limiter.buckets) != 1 {
		t.Errorf("%d sources kept", len(limiter.buckets))
	}
}
