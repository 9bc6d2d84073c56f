package queue

import "strings"

// platformPace is the key under which the slots keep the pace of
// destination's platform (our application's bucket, which every shop of
// a platform spends), as the gate last refused one of its shops with it,
// among the refusals, and hold the tickets it refuses: "" if destination
// names no account. While the bucket is spent, a pick among thousands of
// the platform's shops would otherwise ask the gate about every one of
// them, and set each one's tickets aside, and put them back, one
// refusal each, at each token.
//
// The key is the system with the separator ("shopify/"), which no
// destination is: a destination without an account is the system alone.
// Only a pace is kept so: a platform's breaker may close before its
// refusal ends (its probe answered), which the gate knows first.
func platformPace(destination string) string {
	system, _, ok := strings.Cut(destination, "/")
	if !ok {
		return ""
	}
	return destination[:len(system)+1]
}

// isPlatformPace: r, the gate's refusal of a destination whose
// platformPace is pace, is that platform's pace.
func isPlatformPace(r Refusal, pace string) bool {
	return pace != "" && r.Why == WhyPaced && r.Of == pace[:len(pace)-1]
}
