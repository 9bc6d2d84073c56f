package queue

import (
	"strings"
	"time"
)

// platformPaces are the platforms' paces (our application's bucket, which
// every shop of a platform spends) as the gate last refused one of their
// shops with one, until it ends: the platform's other shops are refused
// the same without asking the gate, which would answer each of them so.
// While the bucket is spent, a pick among thousands of a platform's shops
// would otherwise ask the gate about every one of them.
//
// Only a pace is kept so: a platform's breaker may close before its
// refusal ends (its probe answered), which the gate knows first.
// One entry per platform: a system's name, as Refusal.Of says it.
type platformPaces map[string]Refusal

// of is the refusal of destination's platform, if one paces it at now.
func (p platformPaces) of(destination string, now time.Time) (Refusal, bool) {
	system, _, ok := strings.Cut(destination, "/")
	if !ok {
		return Refusal{}, false
	}
	r, ok := p[system]
	if !ok || !r.Until.After(now) {
		return Refusal{}, false
	}
	return r, true
}

// remember keeps r, the gate's refusal of destination, if it is its
// platform's pace.
func (p platformPaces) remember(destination string, r Refusal) {
	if system, _, ok := strings.Cut(destination, "/"); ok && r.Why == WhyPaced && r.Of == system {
		p[system] = r
	}
}
