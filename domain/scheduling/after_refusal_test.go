package scheduling

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// AfterRefusal is a pure decision: from a refusal, the time and how many
// wait in memory already, what the message does.
func TestAfterARefusalAMessageWaitsInMemoryOrIsParked(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	p := AfterRefusal{Hold: 2 * time.Second}
	soon, late := now.Add(time.Second), now.Add(time.Minute)
	cases := []struct {
		name     string
		r        Refusal
		inMemory int
		want     Decision
	}{
		{"a short wait, in memory", Refusal{Until: soon, Why: WhyPaced}, 0, Decision{Action: KeepInMemory}},
		{"a destination down for long", Refusal{Until: late, Why: WhyBreakerOpen}, 0, Decision{Action: ParkForOutage}},
		{"a destination down briefly, in memory", Refusal{Until: soon, Why: WhyBreakerOpen}, 0, Decision{Action: KeepInMemory}},
		{"a long pace, parked from its end", Refusal{Until: late, Why: WhyPaced}, 0, Decision{Action: ParkForTurn, Earliest: late}},
		{"past the memory's share, behind it at the pace", Refusal{Until: soon, Why: WhyPaced, Every: time.Second}, InMemoryPerDestination,
			Decision{Action: ParkForTurn, Earliest: soon.Add(InMemoryPerDestination * time.Second)}},
		{"past the memory's share without a pace, a group per hold", Refusal{Until: soon, Why: WhyPaced}, 2 * InMemoryPerDestination,
			Decision{Action: ParkForTurn, Earliest: soon.Add(2 * 2 * time.Second)}},
		{"a busy destination keeps a hold's worth", Refusal{Until: soon, Why: WhyBusy, Every: 20 * time.Millisecond}, 99,
			Decision{Action: KeepInMemory}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, p.Decide(c.r, now, c.inMemory), c.name)
	}
}
