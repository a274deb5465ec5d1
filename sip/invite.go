package main

import (
	"context"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// invite places a call through the trunk, as every call the service places is: INVITE
// sip:<to>@<trunk>, From <from> at the trunk's domain (providers expect their domain there; the
// caller ID is the user part), digest credentials when the trunk asks, the G.711 codecs offered.
// Provisional answers go to onProgress. The dialog (nil when none was made) is the caller's to
// close; on success it is answered, not yet ACKed.
func (s *sidecar) invite(ctx context.Context, to, from string, onProgress func(*sip.Response)) (*diago.DialogClientSession, *diago.DialogMedia, error) {
	recipient := sip.Uri{User: to, Host: s.trunk.Host, Port: s.trunk.Port, UriParams: s.trunk.UriParams}
	dialog, err := s.dg.NewDialog(recipient, diago.NewDialogOptions{})
	if err != nil {
		return nil, nil, err
	}
	options := diago.InviteClientOptions{
		Username: s.cfg.username,
		Password: s.cfg.password,
		OnResponse: func(res *sip.Response) error {
			onProgress(res)
			return nil
		},
	}
	if from != "" {
		options.WithCaller("", from, s.trunk.Host)
	}
	med, err := dialog.Invite(ctx, options)
	return dialog, med, err
}
