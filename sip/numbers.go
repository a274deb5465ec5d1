package main

import "regexp"

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
