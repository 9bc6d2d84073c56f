package destinations_test

import (
	"container/heap"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/testsupport/testkit"
)

// A bucket the gate knows nothing of, met by many jobs at once through one
// gate or through three sharing the fleet's state, must be learnt from
// the first few 429s and then kept to: at most 0.2 calls answered 429 per
// job, and the bucket served at 0.9 of its rate or more (issue 39). The
// destination is simulated on the fake clock (a leaky bucket, as the
// marketplace simulator's), so the run takes no wall-clock time.
func TestABucketIsLearntAndKeptToByOneWorkerAndByThree(t *testing.T) {
	platform := destinations.Config{
		Systems:   map[string]destinations.Quota{"amazon": {Concurrency: 10, Rate: 5, Burst: 10}},
		Platforms: map[string]bool{"amazon": true},
	}
	shopBucket := destinations.Config{
		Systems:   map[string]destinations.Quota{"shopify": {Concurrency: 10, Rate: 2, Burst: 40}},
		Platforms: map[string]bool{"shopify": true},
	}
	for _, tc := range []struct {
		name   string
		cfg    destinations.Config
		bucket simBucket
		jobs   int
		// shop names job i's account.
		shop  func(i int) model.Destination
		scope platformerr.Scope
	}{
		{"the platform's whole bucket 10:5, 100 jobs of 100 shops", platform, simBucket{capacity: 10, leak: 5}, 100,
			func(i int) model.Destination { return model.Destination{System: "amazon", Account: fmt.Sprint("p", i)} }, platformerr.ScopeApplication},
		{"the platform's whole bucket 40:20, above one shop's quota, 300 jobs of 300 shops", platform, simBucket{capacity: 40, leak: 20}, 300,
			func(i int) model.Destination { return model.Destination{System: "amazon", Account: fmt.Sprint("p", i)} }, platformerr.ScopeApplication},
		{"the platform's whole bucket 6:3, below one shop's quota, 100 jobs of 100 shops", platform, simBucket{capacity: 6, leak: 3}, 100,
			func(i int) model.Destination { return model.Destination{System: "amazon", Account: fmt.Sprint("p", i)} }, platformerr.ScopeApplication},
		{"a shop's bucket 4:2, 60 jobs of that shop", shopBucket, simBucket{capacity: 4, leak: 2}, 60,
			func(int) model.Destination { return model.Destination{System: "shopify", Account: "s"} }, platformerr.ScopeAccount},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s, %d workers", tc.name, workers), func(t *testing.T) {
				run := simulate(t, tc.cfg, tc.bucket, workers, tc.jobs, tc.shop, tc.scope)
				t.Logf("429s %d (%.2f per job), served %.2f/s after the burst (%.2f× its rate), last end %s",
					run.throttled, run.perJob(), run.served, run.served/tc.bucket.leak, run.lastEnd)
				require.Equal(t, tc.jobs, run.succeeded, "every job ends")
				assert.LessOrEqual(t, run.perJob(), 0.2, "429s per job")
				assert.GreaterOrEqual(t, run.served/tc.bucket.leak, 0.9, "the bucket served at its rate")
			})
		}
	}
}

// simLatency is how long the simulated destination takes to answer a call
// it serves; a 429 is answered at once, as the marketplace simulator does.
const simLatency = 200 * time.Millisecond

// simReach is how long a permitted call takes to reach the destination
// (the job's own reads first, the network): calls permitted together are
// all on their way before the first one's 429 comes back, as when a
// worker's held jobs all ask the gate at the end of one wait.
const simReach = 20 * time.Millisecond

// simLearn is how long after its 429 a call's gate learns of it: the
// worker parks the job before it ends the call's permit.
const simLearn = 10 * time.Millisecond

// simArrivals is the time between two jobs' arrivals.
const simArrivals = 5 * time.Millisecond

// simBucket is the destination's leaky bucket: a call pours one unit in,
// it leaks leak units a second, and a call that would overflow capacity
// is answered 429.
type simBucket struct {
	capacity float64
	leak     float64
	level    float64
	at       time.Time
}

// pour admits one call at now, or says how long until one fits.
func (b *simBucket) pour(now time.Time) (time.Duration, bool) {
	if !b.at.IsZero() {
		b.level = max(0, b.level-now.Sub(b.at).Seconds()*b.leak)
	}
	b.at = now
	if over := b.level + 1 - b.capacity; over > 1e-9 {
		return time.Duration(over / b.leak * float64(time.Second)), false
	}
	b.level++
	return 0, true
}

type simRun struct {
	jobs, succeeded, throttled int
	// served is the calls served a second after the bucket's burst: from
	// the capacity-th served call to the last, as the bench counts them.
	served  float64
	lastEnd time.Duration
}

func (r simRun) perJob() float64 { return float64(r.throttled) / float64(r.jobs) }

// simulate runs jobs calls through workers gates sharing one store, each
// job on gate i%workers, arriving simArrivals apart. A job refused by its
// gate asks again when the wait ends; one answered 429 tells its gate
// simLearn later (the worker parks the job first) and is retried after
// its Retry-After (at least a second, as the worker parks it), in whole
// seconds as HTTP carries it.
func simulate(t *testing.T, cfg destinations.Config, bucket simBucket, workers, jobs int, shop func(int) model.Destination, scope platformerr.Scope) simRun {
	t.Helper()
	clock := testkit.NewManualClockAt(start)
	states := memory.NewDestinationStates()
	gates := make([]*destinations.Gate, workers)
	for i := range gates {
		gates[i] = destinations.NewGate(cfg, clock, states)
	}
	var events simEvents
	seq := 0
	at := func(when time.Time, e simEvent) {
		seq++
		e.at, e.seq = when, seq
		heap.Push(&events, e)
	}
	for i := range jobs {
		at(start.Add(time.Duration(i)*simArrivals), simEvent{kind: simAsk, job: i})
	}
	run := simRun{jobs: jobs}
	var servedAt []time.Time
	for events.Len() > 0 {
		ev := heap.Pop(&events).(simEvent)
		require.Less(t, ev.at.Sub(start), 10*time.Minute, "the jobs never end")
		if ev.at.After(clock.Now()) {
			clock.Advance(ev.at.Sub(clock.Now()))
		}
		now := clock.Now()
		switch ev.kind {
		case simAsk:
			permit, wait := gates[ev.job%workers].Try(shop(ev.job))
			if permit == nil {
				at(maxTime(wait.Until, now.Add(time.Millisecond)), simEvent{kind: simAsk, job: ev.job})
				continue
			}
			at(now.Add(simReach), simEvent{kind: simReached, job: ev.job, permit: permit})
		case simReached:
			retryAfter, ok := bucket.pour(now)
			if ok {
				servedAt = append(servedAt, now)
				at(now.Add(simLatency), simEvent{kind: simServed, job: ev.job, permit: ev.permit})
				continue
			}
			run.throttled++
			ev.retryAfter = time.Duration(math.Ceil(retryAfter.Seconds())) * time.Second
			at(now.Add(simLearn), simEvent{kind: simThrottled, job: ev.job, permit: ev.permit, retryAfter: ev.retryAfter})
			at(now.Add(max(ev.retryAfter, time.Second)), simEvent{kind: simAsk, job: ev.job})
		case simServed:
			ev.permit.Done(destinations.Outcome{Kind: destinations.Succeeded})
			run.succeeded++
			run.lastEnd = now.Sub(start)
		case simThrottled:
			ev.permit.Done(destinations.Outcome{Kind: destinations.Throttled, RetryAfter: ev.retryAfter, Scope: scope})
		}
	}
	if n, burst := len(servedAt), int(bucket.capacity); n > burst {
		run.served = float64(n-burst) / servedAt[n-1].Sub(servedAt[burst-1]).Seconds()
	}
	return run
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// simEvent is one step of a job's call at at; seq keeps the events of
// one time in the order they were made.
type simEvent struct {
	at         time.Time
	seq        int
	kind       simKind
	job        int
	permit     *destinations.Permit
	retryAfter time.Duration
}

type simKind int

const (
	// simAsk: the job asks its gate.
	simAsk simKind = iota
	// simReached: its permitted call reaches the destination.
	simReached
	// simServed: the destination answers the call it served.
	simServed
	// simThrottled: the gate is told of the call's 429.
	simThrottled
)

type simEvents []simEvent

func (e simEvents) Len() int { return len(e) }
func (e simEvents) Less(i, j int) bool {
	if !e[i].at.Equal(e[j].at) {
		return e[i].at.Before(e[j].at)
	}
	return e[i].seq < e[j].seq
}
func (e simEvents) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *simEvents) Push(x any)   { *e = append(*e, x.(simEvent)) }
func (e *simEvents) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}
