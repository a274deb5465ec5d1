package main

import (
	"errors"
	"mime"
	"strconv"
	"strings"

	"github.com/emiago/sipgo/sip"
)

// Keys the far end sends as SIP INFO within the call's dialog (legacy INFO usage, RFC 6086
// section 2): `Content-Type: application/dtmf-relay` with `Signal=5` (and a Duration), or
// `application/dtmf` with `5`. Each reaches the call's leg, and from it the gateway's stream as a
// `dtmf` message, like an RFC 4733 key; the INFO is answered 200. Another body type is answered 415
// with the types taken in Accept (RFC 6086 section 4.2.2, RFC 3261 section 21.4.13), a body of a
// taken type that names no key 400, an INFO without a body 200 (a keep-alive), and one outside
// an answered call's dialog 481. diago answers every INFO 406 itself: the SIP side replaces its
// handler (newSidecar). The INFO is matched to its call by dialog ID: the legs of answered calls
// are kept by theirs (keypadOn), those we answered (Call-ID, our To tag, their From tag) and those
// we placed (Call-ID, their tag, our tag) alike, as diago matches a BYE.

// infoTypes are the INFO body types taken, as the 415's Accept lists them.
const infoTypes = "application/dtmf-relay, application/dtmf"

var (
	errInfoType = errors.New("not a DTMF body type")
	errInfoBody = errors.New("no keypad key in the body")
)

// keypadOn keeps `l` as the leg of dialog `id` until the leg is over.
func (s *sidecar) keypadOn(id string, l *leg) {
	if id == "" {
		return
	}
	s.mu.Lock()
	s.keypads[id] = l
	s.mu.Unlock()
	go func() {
		<-l.gone
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.keypads[id] == l {
			delete(s.keypads, id)
		}
	}()
}

// keypadOf is the leg of the answered call whose dialog `req` is in (nil: none).
func (s *sidecar) keypadOf(req *sip.Request) *leg {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, err := sip.DialogIDFromRequestUAS(req); err == nil && s.keypads[id] != nil {
		return s.keypads[id]
	}
	if id, err := sip.DialogIDFromRequestUAC(req); err == nil && s.keypads[id] != nil {
		return s.keypads[id]
	}
	return nil
}

// serveInfo answers an INFO (the guard has passed it), its key pressed on its call's leg.
func (s *sidecar) serveInfo(req *sip.Request, tx sip.ServerTransaction) {
	respond := func(status int, reason string, headers ...sip.Header) {
		res := sip.NewResponseFromRequest(req, status, reason, nil)
		for _, header := range headers {
			res.AppendHeader(header)
		}
		_ = tx.Respond(res)
	}
	l := s.keypadOf(req)
	if l == nil {
		respond(sip.StatusCallTransactionDoesNotExists, "Call/Transaction Does Not Exist")
		return
	}
	if len(strings.TrimSpace(string(req.Body()))) == 0 {
		respond(sip.StatusOK, "OK")
		return
	}
	contentType := ""
	if header := req.ContentType(); header != nil {
		contentType = header.Value()
	}
	key, err := infoKey(contentType, req.Body())
	switch {
	case errors.Is(err, errInfoType):
		s.log.Info("SIP INFO of another body type: refused", "contentType", contentType)
		respond(sip.StatusUnsupportedMediaType, "Unsupported Media Type", sip.NewHeader("Accept", infoTypes))
	case err != nil:
		s.log.Info("SIP INFO without a keypad key: refused", "contentType", contentType)
		respond(sip.StatusBadRequest, "Bad Request")
	default:
		l.pressed(key)
		respond(sip.StatusOK, "OK")
	}
}

// infoKey reads the key of an INFO body of type `contentType`.
func infoKey(contentType string, body []byte) (string, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", errInfoType
	}
	switch mediaType {
	case "application/dtmf-relay":
		// Lines of name=value: Signal=5, Duration=160 (ms); the names in any case.
		for _, line := range strings.Split(string(body), "\n") {
			name, value, found := strings.Cut(line, "=")
			if found && strings.EqualFold(strings.TrimSpace(name), "signal") {
				return signalKey(value)
			}
		}
		return "", errInfoBody
	case "application/dtmf":
		return signalKey(string(body))
	}
	return "", errInfoType
}

// signalKey is the key a signal names: the key itself, or (as some gateways send them) its RFC 4733
// event number, 10 for *, 11 for #, 12-15 for A-D.
func signalKey(signal string) (string, error) {
	signal = strings.TrimSpace(signal)
	if key, ok := keypadKey(signal); ok {
		return key, nil
	}
	if event, err := strconv.Atoi(signal); err == nil && event >= 10 && event <= 15 {
		return keypadKeys[event : event+1], nil
	}
	return "", errInfoBody
}
