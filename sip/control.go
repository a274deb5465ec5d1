package main

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
)

// The control API the calls workers' carrier (lib/carrier/sip-carrier.ts) uses, on loopback
// (SIP_CONTROL_URL) with `Authorization: Bearer SIP_CONTROL_TOKEN`, its own secret (the Media
// Streams token a client holds does not open it):
//   POST /calls/{callId}/dial     {"to","from","ringTimeoutSeconds","gateway","streamsUrl","streamToken"}:
//                                 place the call; its callbacks go to `gateway` (the media gateway's
//                                 control URL), its answered audio to `streamsUrl` with the call's
//                                 own `streamToken` (which opens this call and no other)
//   POST /calls/{callId}/release  {"reason":"cancel"|"hang_up"}: CANCEL a ringing call, BYE a live one
//   GET  /healthz
//   GET  /metrics                 sip_requests_refused_total{reason} (guard.go)
// Both POSTs answer 200 at once; what happens to the call comes back as carrier callbacks.

var controlPath = regexp.MustCompile(`^/calls/([0-9a-f-]{36})/(dial|release)$`)

type dialRequest struct {
	To                 string `json:"to"`
	From               string `json:"from"`
	RingTimeoutSeconds int    `json:"ringTimeoutSeconds"`
	Gateway            string `json:"gateway"`
	StreamsURL         string `json:"streamsUrl"`
	StreamToken        string `json:"streamToken"`
}

func (s *sidecar) controlHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := func(status int, body any) {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(body)
		}
		if r.Method == http.MethodGet && r.URL.Path == "/metrics" {
			w.Header().Set("content-type", "text/plain; version=0.0.4")
			s.refused.writeMetrics(w)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
			placed, answered := s.counts()
			answer(200, map[string]any{"status": "ok", "placed": placed, "answered": answered})
			return
		}
		bearer := strings.TrimPrefix(r.Header.Get("authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(bearer), []byte(s.cfg.controlToken)) != 1 {
			answer(401, map[string]string{"error": "invalid token"})
			return
		}
		match := controlPath.FindStringSubmatch(r.URL.Path)
		if r.Method != http.MethodPost || match == nil {
			answer(404, map[string]string{"error": "not found"})
			return
		}
		callID := match[1]
		r.Body = http.MaxBytesReader(w, r.Body, 16*1024)
		if match[2] == "dial" {
			var request dialRequest
			if json.NewDecoder(r.Body).Decode(&request) != nil || request.To == "" || request.Gateway == "" ||
				request.StreamsURL == "" || request.StreamToken == "" {
				answer(400, map[string]string{"error": "the body must be {to, from, ringTimeoutSeconds, gateway, streamsUrl, streamToken}"})
				return
			}
			if s.cfg.trunk == "" {
				answer(409, map[string]string{"error": "SIP_TRUNK_URI is not set: no outbound calls"})
				return
			}
			answer(200, map[string]any{"callId": callID, "dialing": s.dial(callID, request)})
			return
		}
		var request struct {
			Reason string `json:"reason"`
		}
		_ = json.NewDecoder(r.Body).Decode(&request)
		s.log.Debug("release asked", "callId", callID, "reason", request.Reason)
		s.release(callID)
		answer(200, map[string]any{"callId": callID, "released": true})
	})
}
