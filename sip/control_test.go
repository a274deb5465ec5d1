package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The control API's doors, the carrier callbacks' delivery, and where the streams are.

func TestControlAPIRefusesWhatItShould(t *testing.T) {
	t.Parallel()
	gateway := newFakeGateway(t)
	s := startSidecar(t, gateway, nil, nil) // no trunk: no outbound calls
	dial := "/calls/" + placedCallID + "/dial"
	good := map[string]any{"to": "+4755501234", "from": "+4721000042", "ringTimeoutSeconds": 30,
		"gateway": gateway.url(), "streamsUrl": gateway.streamsURL(), "streamToken": "t"}
	cases := []struct {
		what, method, path, token string
		body                      any
		status                    int
	}{
		{"no token", "POST", dial, "", good, 401},
		{"the streams token", "POST", dial, testStreamsToken, good, 401},
		{"the callbacks token", "POST", dial, testControlToken, good, 401},
		{"not a call id", "POST", "/calls/42/dial", testSIPToken, good, 404},
		{"an unknown action", "POST", "/calls/" + placedCallID + "/answer", testSIPToken, good, 404},
		{"a GET", "GET", dial, testSIPToken, nil, 404},
		{"no streams URL", "POST", dial, testSIPToken, map[string]any{"to": "+4755501234", "gateway": gateway.url(), "streamToken": "t"}, 400},
		{"not JSON", "POST", dial, testSIPToken, "to=+4755501234", 400},
		{"no trunk", "POST", dial, testSIPToken, good, 409},
	}
	for _, c := range cases {
		if status, answer := s.request(t, c.method, c.path, c.token, c.body); status != c.status {
			t.Errorf("%s: %d %v, want %d", c.what, status, answer, c.status)
		}
	}
	// Health and metrics need no token.
	if status, answer := s.request(t, "GET", "/healthz", "", nil); status != 200 || answer["status"] != "ok" || answer["placed"] != 0.0 {
		t.Errorf("/healthz: %d %v", status, answer)
	}
	res, err := http.Get(s.control.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(text), `sip_requests_refused_total{reason="untrusted_source"} 0`) {
		t.Errorf("/metrics:\n%s", text)
	}
	gateway.noStream(t)
	gateway.noCallback(t)
}

// A callback the gateway did not take is sent again; a call's callbacks arrive in order, each to
// the call's path with the control token.
func TestCallbacksAreRetriedInOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	failures := 1
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		got = append(got, r.URL.Path+" "+r.Header.Get("authorization")+" "+string(body))
	}))
	defer server.Close()
	c := &callbacks{token: testControlToken, client: server.Client(), log: quietLog()}
	queue := c.queue(server.URL, placedCallID)
	queue.push("ringing")
	queue.push("busy")
	started := time.Now()
	queue.close() // waits for both
	mu.Lock()
	defer mu.Unlock()
	path := "/media/carrier/calls/" + placedCallID + "/callback Bearer " + testControlToken + " "
	want := []string{path + `{"type":"ringing"}`, path + `{"type":"busy"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("delivered:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if waited := time.Since(started); waited < 300*time.Millisecond {
		t.Errorf("retried after %v: no pause", waited)
	}
	var nothing *callbackQueue
	nothing.pushWith(map[string]any{"type": "transfer_ended"}) // a call without callbacks: no panic
}

func TestStreamsURL(t *testing.T) {
	cases := map[string]string{
		"http://127.0.0.1:8090":          "ws://127.0.0.1:8090/media/streams",
		"https://media.example.com":      "wss://media.example.com/media/streams",
		"http://media:8090/some/prefix/": "ws://media:8090/media/streams",
	}
	for gateway, want := range cases {
		if got := streamsURL(gateway); got != want {
			t.Errorf("%s: %s, want %s", gateway, got, want)
		}
	}
}
