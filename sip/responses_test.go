package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

func answer(status int) *sip.Response {
	return sip.NewResponse(status, "")
}

func TestDialogResponseFindsPointerAndValue(t *testing.T) {
	for _, err := range []error{
		&sipgo.ErrDialogResponse{Res: answer(486)},
		sipgo.ErrDialogResponse{Res: answer(486)},
		fmt.Errorf("invite: %w", sipgo.ErrDialogResponse{Res: answer(486)}),
	} {
		res, ok := dialogResponse(err)
		if !ok || res.StatusCode != 486 {
			t.Fatalf("%v: got %v %v", err, res, ok)
		}
	}
	if _, ok := dialogResponse(errors.New("transaction timeout")); ok {
		t.Fatal("an error without an answer gave one")
	}
}

func TestReferTaken(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{nil, true},
		{sipgo.ErrDialogResponse{Res: answer(200)}, true},
		{sipgo.ErrDialogResponse{Res: answer(405)}, false},
		{sipgo.ErrDialogResponse{Res: answer(501)}, false},
		{sipgo.ErrDialogResponse{Res: answer(603)}, false},
		{context.DeadlineExceeded, false},
	}
	for _, c := range cases {
		if got := referTaken(c.err); got != c.want {
			t.Errorf("referTaken(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
