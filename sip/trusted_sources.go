package main

import (
	"fmt"
	"net/netip"
	"strings"
)

// Who may reach the SIP side (telephony spec section 2): the addresses in SIP_TRUSTED_SOURCES (the
// trunk's signalling addresses, IPs or CIDRs), else loopback only. A request from anywhere else is
// answered 403 and costs nothing: no Call, no workflow, no model time.

type trustedSources []netip.Prefix

// loopbackOnly is what an unset SIP_TRUSTED_SOURCES allows.
var loopbackOnly = trustedSources{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// parseTrustedSources reads `203.0.113.10, 198.51.100.0/24, 2001:db8::/32`.
func parseTrustedSources(text string) (trustedSources, error) {
	var sources trustedSources
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if prefix, err := netip.ParsePrefix(part); err == nil {
			sources = append(sources, prefix.Masked())
			continue
		}
		addr, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("SIP_TRUSTED_SOURCES: %q is neither an IP address nor a CIDR", part)
		}
		addr = addr.Unmap()
		sources = append(sources, netip.PrefixFrom(addr, addr.BitLen()))
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("SIP_TRUSTED_SOURCES names no address")
	}
	return sources, nil
}

// allows reports whether a request from addr (IPv4-mapped IPv6 counts as IPv4) is served.
func (t trustedSources) allows(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, prefix := range t {
		if prefix.Contains(addr) {
			return true
		}
	}
	return false
}

func (t trustedSources) String() string {
	parts := make([]string, len(t))
	for i, prefix := range t {
		parts[i] = prefix.String()
	}
	return strings.Join(parts, ",")
}

// isLoopbackHost reports whether a listen host reaches loopback only (an unspecified address such
// as 0.0.0.0 listens everywhere, and a name is taken as public).
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}
