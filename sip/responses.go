package main

import (
	"errors"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// dialogResponse is the final answer behind a failed request, if the far end gave one: sipgo
// returns *ErrDialogResponse, diago (REFER, some INVITE paths) the value, so both are looked for.
func dialogResponse(err error) (*sip.Response, bool) {
	var pointer *sipgo.ErrDialogResponse
	if errors.As(err, &pointer) && pointer.Res != nil {
		return pointer.Res, true
	}
	var value sipgo.ErrDialogResponse
	if errors.As(err, &value) && value.Res != nil {
		return value.Res, true
	}
	return nil, false
}

// referTaken says whether the far end took a REFER: any 2xx (RFC 3515 asks for 202, some answer
// 200). Anything else (a refusal, no answer, a dialog already gone) means it did not.
func referTaken(err error) bool {
	if err == nil {
		return true
	}
	res, ok := dialogResponse(err)
	return ok && res.IsSuccess()
}
