package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A call that comes in goes to a media gateway that is not draining (telephony spec section 5).

func TestGatewayList(t *testing.T) {
	list, err := gatewayList(" http://127.0.0.1:8090, http://media2:8100/ ")
	if err != nil || len(list) != 2 {
		t.Fatalf("%v, %v", list, err)
	}
	want := []gatewayAddress{
		{public: "http://127.0.0.1:8090", control: "http://127.0.0.1:8091"},
		{public: "http://media2:8100", control: "http://media2:8101"},
	}
	for i := range want {
		if list[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, list[i], want[i])
		}
	}
	if list, err := gatewayList(""); err != nil || len(list) != 0 {
		t.Errorf("unset: %v, %v", list, err)
	}
	for _, bad := range []string{"media:8090", "http://media", "ftp://a:1", "http://a:1/path"} {
		if _, err := gatewayList(bad); err == nil {
			t.Errorf("%s taken", bad)
		}
	}
}

func readyzServer(t *testing.T, status *int) gatewayAddress {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(*status)
	}))
	t.Cleanup(server.Close)
	return gatewayAddress{public: server.URL, control: server.URL + "-control"}
}

func TestPlacementSkipsDrainingGateways(t *testing.T) {
	drainingStatus, readyStatus := http.StatusServiceUnavailable, http.StatusOK
	draining, ready := readyzServer(t, &drainingStatus), readyzServer(t, &readyStatus)
	clock := time.Unix(0, 0)
	placement := newGatewayPlacement([]gatewayAddress{draining, ready})
	placement.now = func() time.Time { return clock }
	for i := range 3 {
		if got := placement.pick(context.Background()); got != ready {
			t.Fatalf("pick %d: %+v while the first drains", i, got)
		}
	}
	// Ready again: once its 503 has aged, the two share the calls.
	drainingStatus = http.StatusOK
	clock = clock.Add(readyFor)
	first, second := placement.pick(context.Background()), placement.pick(context.Background())
	if first == second {
		t.Errorf("both calls to %+v", first)
	}
}

func TestPlacementWithNoneReadyTakesTheNextInTurn(t *testing.T) {
	down := gatewayAddress{public: "http://127.0.0.1:1", control: "http://127.0.0.1:2"}
	status := http.StatusServiceUnavailable
	draining := readyzServer(t, &status)
	placement := newGatewayPlacement([]gatewayAddress{down, draining})
	if got := placement.pick(context.Background()); got != down {
		t.Errorf("first: %+v", got)
	}
	if got := placement.pick(context.Background()); got != draining {
		t.Errorf("second: %+v", got)
	}
}

func TestPlacementOfOneGatewayAsksNothing(t *testing.T) {
	placement := newGatewayPlacement([]gatewayAddress{{public: "http://127.0.0.1:1", control: "x"}})
	placement.isReady = func(context.Context, gatewayAddress) bool {
		t.Error("asked")
		return false
	}
	if got := placement.pick(context.Background()); got.public != "http://127.0.0.1:1" {
		t.Errorf("%+v", got)
	}
}
