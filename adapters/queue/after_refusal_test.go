package queue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// afterRefusal is a pure decision: from a refusal, the time and how many
// wait in memory already, what the message does.
func TestAfterARefusalAMessageWaitsInMemoryOrIsParked(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	p := afterRefusal{hold: 2 * time.Second}
	soon, late := now.Add(time.Second), now.Add(time.Minute)
	cases := []struct {
		name     string
		r        Refusal
		inMemory int
		want     refusalDecision
	}{
		{"a short wait, in memory", Refusal{Until: soon, Why: WhyPaced}, 0, refusalDecision{action: keepInMemory}},
		{"a destination down for long", Refusal{Until: late, Why: WhyBreakerOpen}, 0, refusalDecision{action: parkForOutage}},
		{"a destination down briefly, in memory", Refusal{Until: soon, Why: WhyBreakerOpen}, 0, refusalDecision{action: keepInMemory}},
		{"a long pace, parked from its end", Refusal{Until: late, Why: WhyPaced}, 0, refusalDecision{action: parkForTurn, earliest: late}},
		{"past the memory's share, behind it at the pace", Refusal{Until: soon, Why: WhyPaced, Every: time.Second}, inMemoryPerDestination,
			refusalDecision{action: parkForTurn, earliest: soon.Add(inMemoryPerDestination * time.Second)}},
		{"past the memory's share without a pace, a group per hold", Refusal{Until: soon, Why: WhyPaced}, 2 * inMemoryPerDestination,
			refusalDecision{action: parkForTurn, earliest: soon.Add(2 * 2 * time.Second)}},
		{"a busy destination keeps a hold's worth", Refusal{Until: soon, Why: WhyBusy, Every: 20 * time.Millisecond}, 99,
			refusalDecision{action: keepInMemory}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, p.decide(c.r, now, c.inMemory), c.name)
	}
}

// Refusals end in the order of their ends, whatever order they came in;
// one forgotten ends no more, and one remembered again ends at its new
// end.
func TestRefusalsEndInTheirOrder(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	rs := newRefusals()
	rs.remember("c", Refusal{Until: now.Add(3 * time.Second)}, now)
	rs.remember("a", Refusal{Until: now.Add(time.Second)}, now)
	rs.remember("b", Refusal{Until: now.Add(2 * time.Second)}, now)
	rs.forget("b")
	rs.remember("b", Refusal{Until: now.Add(4 * time.Second)}, now)
	var ended []string
	end := func(d string) { ended = append(ended, d) }
	assert.Equal(t, now.Add(time.Second), rs.expire(now, end))
	assert.Equal(t, now.Add(3*time.Second), rs.expire(now.Add(2*time.Second), end))
	assert.Equal(t, []string{"a"}, ended, "b was forgotten, and remembered for later")
	assert.True(t, rs.expire(now.Add(5*time.Second), end).IsZero())
	assert.Equal(t, []string{"a", "c", "b"}, ended)
	_, refused := rs.of("b", now)
	assert.False(t, refused)
}
