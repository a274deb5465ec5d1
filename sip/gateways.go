package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Which media gateway a call that comes in goes to (telephony spec section 5), as the workers place
// theirs (lib/media/gateway-placement.ts): with MEDIA_GATEWAY_URLS, the next gateway in turn whose
// /readyz answers 200, so a draining gateway (SIGTERM: /readyz 503 while its calls finish) or one
// whose speech server is down takes no new call; with none ready, the next in turn all the same.
// A gateway's answer stands for readyFor, so an INVITE costs no request each.

const (
	readyFor     = time.Second
	readyTimeout = 500 * time.Millisecond
)

// gatewayAddress is a media gateway as the SIP side reaches it.
type gatewayAddress struct {
	public  string // http://HOST:MEDIA_PORT: its Media Streams and /readyz
	control string // its control port: the callbacks of the calls it took
}

// gatewayList reads MEDIA_GATEWAY_URLS (public addresses, comma-separated, each one's control port
// the next one); empty: none given.
func gatewayList(text string) ([]gatewayAddress, error) {
	var list []gatewayAddress
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimRight(strings.TrimSpace(item), "/")
		if item == "" {
			continue
		}
		u, err := url.Parse(item)
		port, perr := strconv.Atoi(u.Port())
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || perr != nil || u.Path != "" {
			return nil, fmt.Errorf("MEDIA_GATEWAY_URLS must be http://HOST:PORT addresses, comma-separated (got %q)", item)
		}
		list = append(list, gatewayAddress{
			public:  item,
			control: fmt.Sprintf("%s://%s", u.Scheme, net.JoinHostPort(u.Hostname(), strconv.Itoa(port+1))),
		})
	}
	return list, nil
}

type readiness struct {
	ready bool
	at    time.Time
}

type gatewayPlacement struct {
	gateways []gatewayAddress
	isReady  func(ctx context.Context, g gatewayAddress) bool
	now      func() time.Time

	mu    sync.Mutex
	next  int
	known map[string]readiness
}

func newGatewayPlacement(gateways []gatewayAddress) *gatewayPlacement {
	client := &http.Client{Timeout: readyTimeout}
	return &gatewayPlacement{
		gateways: gateways,
		now:      time.Now,
		known:    map[string]readiness{},
		isReady: func(ctx context.Context, g gatewayAddress) bool {
			request, err := http.NewRequestWithContext(ctx, http.MethodGet, g.public+"/readyz", nil)
			if err != nil {
				return false
			}
			response, err := client.Do(request)
			if err != nil {
				return false
			}
			response.Body.Close()
			return response.StatusCode == http.StatusOK
		},
	}
}

// pick is the gateway for a new call: the next ready one in turn, else the next in turn.
func (p *gatewayPlacement) pick(ctx context.Context) gatewayAddress {
	count := len(p.gateways)
	p.mu.Lock()
	start := p.next
	p.next = (p.next + 1) % count
	p.mu.Unlock()
	if count == 1 {
		return p.gateways[0]
	}
	ready := make([]bool, count)
	var wait sync.WaitGroup
	for i := range count {
		wait.Add(1)
		go func(i int) {
			defer wait.Done()
			ready[i] = p.ready(ctx, p.gateways[(start+i)%count])
		}(i)
	}
	wait.Wait()
	taken := start
	for i := range count {
		if ready[i] {
			taken = (start + i) % count
			break
		}
	}
	// Turns continue after the one taken, so ready gateways share the calls.
	p.mu.Lock()
	p.next = (taken + 1) % count
	p.mu.Unlock()
	return p.gateways[taken]
}

func (p *gatewayPlacement) ready(ctx context.Context, g gatewayAddress) bool {
	p.mu.Lock()
	known, ok := p.known[g.public]
	p.mu.Unlock()
	if ok && p.now().Sub(known.at) < readyFor {
		return known.ready
	}
	ready := p.isReady(ctx, g)
	p.mu.Lock()
	p.known[g.public] = readiness{ready: ready, at: p.now()}
	p.mu.Unlock()
	return ready
}
