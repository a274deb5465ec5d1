package main

import "testing"

func TestFailureCallback(t *testing.T) {
	cases := map[int]string{
		486: "busy", 600: "busy",
		408: "declined", 480: "declined",
		403: "not_connected", 404: "not_connected", 407: "not_connected", 503: "not_connected", 603: "not_connected",
	}
	for status, want := range cases {
		if got := failureCallback(status); got != want {
			t.Errorf("%d: got %s, want %s", status, got, want)
		}
	}
}

func TestPhoneNumber(t *testing.T) {
	cases := map[string]string{
		"+14155550100": "+14155550100", "14155550100": "+14155550100",
		"anonymous": "", "": "", "+0123456789": "", "123": "", "1415555010012345": "",
	}
	for user, want := range cases {
		if got := phoneNumber(user); got != want {
			t.Errorf("%q: got %q, want %q", user, got, want)
		}
	}
}

func TestPortRange(t *testing.T) {
	if a, b, err := portRange("20000-20999"); err != nil || a != 20000 || b != 20999 {
		t.Fatalf("got %d %d %v", a, b, err)
	}
	for _, bad := range []string{"", "20000", "2-1", "0-10", "1-70000", "a-b"} {
		if _, _, err := portRange(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
