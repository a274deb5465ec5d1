package main

import (
	"regexp"
	"strings"
)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// phoneNumber reads the user part of a SIP URI as an E.164 number, with or without the `+`
// (trunks send both); "" when it is not one (a name, an extension, `anonymous`).
func phoneNumber(user string) string {
	if user == "" {
		return ""
	}
	if user[0] != '+' {
		user = "+" + user
	}
	if !e164.MatchString(user) {
		return ""
	}
	return user
}

// assertedIdentity matches the number of a P-Asserted-Identity value (RFC 3325): the user of a
// `sip:`/`sips:` URI or a `tel:` URI, with or without a display name and angle brackets.
var assertedIdentity = regexp.MustCompile(`(?i)(?:sips?:|tel:)\+?([0-9]+)`)

// callerNumber is the caller of a call that comes in: the number the trunk asserts
// (P-Asserted-Identity, which a trunk sets from what it verified), else the From user, which the
// caller's own equipment may write freely. "" when neither is a phone number.
func callerNumber(assertedValues []string, fromUser string) string {
	for _, value := range assertedValues {
		for _, identity := range strings.Split(value, ",") {
			if match := assertedIdentity.FindStringSubmatch(identity); match != nil {
				if number := phoneNumber(match[1]); number != "" {
					return number
				}
			}
		}
	}
	return phoneNumber(fromUser)
}
