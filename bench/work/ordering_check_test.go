package work

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/adapters/simulator/simcore"
)

var t0 = time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)

func call(token string, from, to int) simcore.Span {
	return simcore.Span{Token: token, Start: t0.Add(time.Duration(from) * time.Millisecond), End: t0.Add(time.Duration(to) * time.Millisecond)}
}

func jobsOfKey(key string, tokens ...string) []keyedJob {
	var out []keyedJob
	for i, tk := range tokens {
		out = append(out, keyedJob{key: key, seq: int64(i+1) * 10, token: tk, succeeded: true})
	}
	return out
}

func once(tokens ...string) map[string]int {
	out := map[string]int{}
	for _, tk := range tokens {
		out[tk]++
	}
	return out
}

// A key's calls one after the other in commit order, a retry of a job
// before the next one's call included, are clean.
func TestCheckOrderingAcceptsCallsInCommitOrder(t *testing.T) {
	jobs := jobsOfKey("k", "a", "b", "c")
	calls := map[string][]simcore.Span{"k": {call("c", 300, 400), call("a", 0, 100), call("a", 100, 150), call("b", 150, 300)}}
	v := checkOrdering(jobs, calls, once("a", "b", "c"))
	assert.Equal(t, orderingVerdict{calls: 4}, v)
}

func TestCheckOrderingCountsACallAfterALaterJobs(t *testing.T) {
	jobs := jobsOfKey("k", "a", "b")
	v := checkOrdering(jobs, map[string][]simcore.Span{"k": {call("b", 0, 100), call("a", 100, 200)}}, once("a", "b"))
	assert.Equal(t, 1, v.outOfOrder)
	assert.Zero(t, v.overlaps)
}

func TestCheckOrderingCountsTwoJobsOfAKeyAtOnce(t *testing.T) {
	jobs := jobsOfKey("k", "a", "b")
	v := checkOrdering(jobs, map[string][]simcore.Span{"k": {call("a", 0, 100), call("b", 99, 200)}}, once("a", "b"))
	assert.Equal(t, 1, v.overlaps)
	assert.Zero(t, v.outOfOrder)

	// A call that never ended overlaps everything after it.
	open := simcore.Span{Token: "a", Start: t0}
	v = checkOrdering(jobs, map[string][]simcore.Span{"k": {open, call("b", 5000, 5100)}}, once("a", "b"))
	assert.Equal(t, 1, v.overlaps)

	// One job's two calls at once are its own (a redelivery beside a
	// killed worker's call), counted apart.
	v = checkOrdering(jobs, map[string][]simcore.Span{"k": {call("a", 0, 100), call("a", 50, 120), call("b", 120, 200)}}, once("a", "b"))
	assert.Equal(t, 1, v.sameJobOverlaps)
	assert.Zero(t, v.overlaps)
}

func TestCheckOrderingKeepsKeysApart(t *testing.T) {
	jobs := append(jobsOfKey("k", "a", "b"), jobsOfKey("l", "x")...)
	calls := map[string][]simcore.Span{"k": {call("a", 0, 100), call("b", 100, 200)}, "l": {call("x", 0, 200)}}
	assert.Equal(t, orderingVerdict{calls: 3}, checkOrdering(jobs, calls, once("a", "b", "x")))
}

func TestCheckOrderingCountsLostAndDuplicates(t *testing.T) {
	jobs := jobsOfKey("k", "a", "b", "c")
	jobs[2].succeeded = false
	calls := map[string][]simcore.Span{"k": {call("a", 0, 100), call("b", 100, 200), call("zz", 300, 400)}}
	v := checkOrdering(jobs, calls, map[string]int{"a": 2})
	assert.Equal(t, 1, v.lost, "c did not succeed")
	assert.Equal(t, 1, v.duplicates, "a acted twice")
	assert.Equal(t, 1, v.unacted, "b succeeded with no effect")
	assert.Equal(t, 1, v.unknown, "a token nobody committed")
}
