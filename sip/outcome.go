package main

// The carrier callback a failed INVITE's final answer is (../spec/voice-media-v1.md section 6):
// 486 and 600 busy; 408 and 480 no answer (the call workflow reads `declined` as no_answer);
// every other failure not_connected. A 401/407 left after the digest credentials were tried is
// one of those others: the trunk refused our credentials.
func failureCallback(status int) string {
	switch status {
	case 486, 600:
		return "busy"
	case 408, 480:
		return "declined"
	default:
		return "not_connected"
	}
}
