package queue

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
)

// waiter is one acquire running in its own goroutine, as the worker's
// router runs each message.
type waiter struct {
	release func(CallResult)
	wait    *waitFor
	err     error
	done    chan struct{}
}

func acquireAsync(s *slots, ctx context.Context, ws uuid.UUID, dest, key string) *waiter {
	w := &waiter{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.release, w.wait, w.err = s.acquire(ctx, ws, dest, key, nil)
	}()
	return w
}

func (w *waiter) ended() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// started is n jobs of ws for dest, each started in a slot of s.
func started(s *slots, ws uuid.UUID, dest string, n int) []*waiter {
	var held []*waiter
	for range n {
		w := acquireAsync(s, context.Background(), ws, dest, "")
		<-w.done
		held = append(held, w)
	}
	return held
}

// queued waits until n tickets wait in s: the goroutines have enqueued.
func queued(t *testing.T, s *slots, n int) {
	t.Helper()
	require.Eventually(t, func() bool { _, _, waiting := s.stats(); return waiting == n }, 10*time.Second, time.Millisecond)
}

func TestSlotsNeverRunMoreThanTheirSize(t *testing.T) {
	s := newSlots(3, time.Second, nil, nil)
	ws := uuid.New()
	ws_ := started(s, ws, "", 3)
	fourth := acquireAsync(s, context.Background(), ws, "", "")
	queued(t, s, 1)
	assert.False(t, fourth.ended(), "a fourth job started while three run")
	ws_[0].release(CallResult{})
	<-fourth.done
	running, peak, waiting := s.stats()
	assert.Equal(t, []int{3, 3, 0}, []int{running, peak, waiting})
}

// With one slot busy and workspace A's backlog queued before B's single
// message, B's message gets the next slot, not A's second.
func TestSlotsTakeTurnsBetweenWorkspaces(t *testing.T) {
	s := newSlots(1, time.Second, nil, nil)
	a, b := uuid.New(), uuid.New()
	first := acquireAsync(s, context.Background(), a, "", "")
	<-first.done
	var backlog []*waiter
	for i := range 50 {
		backlog = append(backlog, acquireAsync(s, context.Background(), a, "", ""))
		queued(t, s, i+1)
	}
	other := acquireAsync(s, context.Background(), b, "", "")
	queued(t, s, 51)

	first.release(CallResult{})
	<-other.done // B's turn
	for _, w := range backlog {
		assert.False(t, w.ended(), "A's backlog went before B")
	}
	other.release(CallResult{})
	<-backlog[0].done // then A again, in its order
	for _, w := range backlog[1:] {
		assert.False(t, w.ended())
	}
}

// Messages with one ordering key start one at a time, in arrival order,
// while a message without a key passes them.
func TestSlotsRunAKeyOneAtATimeInOrder(t *testing.T) {
	s := newSlots(4, time.Second, nil, nil)
	ws := uuid.New()
	var line []*waiter
	for i := range 3 {
		line = append(line, acquireAsync(s, context.Background(), ws, "", "catalog/1"))
		if i == 0 {
			<-line[0].done
		} else {
			queued(t, s, i)
		}
	}
	free := acquireAsync(s, context.Background(), ws, "", "")
	<-free.done
	for i := 1; i < 3; i++ {
		assert.False(t, line[i].ended(), "a second job of the key started while the first runs")
	}
	line[0].release(CallResult{})
	<-line[1].done
	assert.False(t, line[2].ended())
	line[1].release(CallResult{})
	<-line[2].done
}

// fakeGate refuses the destinations in refuse until then (why: breaker_open
// unless said, of and every as given), and counts the outcomes it hears.
type fakeGate struct {
	mu      sync.Mutex
	refuse  map[string]time.Time
	why     string
	of      string
	every   time.Duration
	results []CallResult
}

func (g *fakeGate) Try(d string) (func(CallResult), Refusal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until, ok := g.refuse[d]; ok {
		return nil, Refusal{Until: until, Why: cmp.Or(g.why, WhyBreakerOpen), Of: g.of, Every: g.every}
	}
	return func(r CallResult) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.results = append(g.results, r)
	}, Refusal{}
}

// A destination refused for longer than the hold parks its messages
// durably (with their key's line, in order) and holds no slot, while
// another destination's message runs.
func TestSlotsParkWhatWaitsLongerThanTheHold(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	down := now.Add(time.Minute)
	gate := &fakeGate{refuse: map[string]time.Time{"shopify/a": down}}
	s := newSlots(1, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()

	blocker := acquireAsync(s, context.Background(), ws, "", "")
	<-blocker.done
	k1 := acquireAsync(s, context.Background(), ws, "shopify/a", "catalog/1")
	queued(t, s, 1)
	k2 := acquireAsync(s, context.Background(), ws, "shopify/a", "catalog/1")
	queued(t, s, 2)
	flowing := acquireAsync(s, context.Background(), ws, "amazon/b", "")
	queued(t, s, 3)

	blocker.release(CallResult{})
	<-k1.done
	<-k2.done
	<-flowing.done
	require.NotNil(t, k1.wait)
	require.NotNil(t, k2.wait)
	assert.Nil(t, k1.release)
	assert.False(t, k1.wait.until.Before(down), "parked until the refusal ends")
	assert.True(t, k1.wait.until.Before(down.Add(2*time.Second)), "spread over one hold at most")
	assert.True(t, k2.wait.until.After(k1.wait.until), "the key's second comes back after its first")
	assert.Nil(t, flowing.wait, "the other destination's message runs")
	flowing.release(CallResult{Failed: true})
	assert.Equal(t, []CallResult{{Failed: true}}, gate.results)
}

// A short refusal is waited in memory: the message starts once the
// destination grants, without being parked.
func TestSlotsWaitAShortRefusalInMemory(t *testing.T) {
	now := time.Now()
	gate := &fakeGate{refuse: map[string]time.Time{"shopify/a": now.Add(10 * time.Millisecond)}}
	s := newSlots(2, 2*time.Second, gate, time.Now)
	w := acquireAsync(s, context.Background(), uuid.New(), "shopify/a", "")
	queued(t, s, 1)
	gate.mu.Lock()
	delete(gate.refuse, "shopify/a")
	gate.mu.Unlock()
	<-w.done // the wake at the refusal's end pumps again
	assert.Nil(t, w.wait)
	require.NotNil(t, w.release)
	w.release(CallResult{})
}

// A message whose worker stops while it waits leaves the line and holds
// nothing.
func TestSlotsLetAStoppedWaiterGo(t *testing.T) {
	s := newSlots(1, time.Second, nil, nil)
	ws := uuid.New()
	first := acquireAsync(s, context.Background(), ws, "", "")
	<-first.done
	ctx, cancel := context.WithCancel(context.Background())
	w := acquireAsync(s, ctx, ws, "", "")
	queued(t, s, 1)
	cancel()
	<-w.done
	assert.Error(t, w.err)
	first.release(CallResult{})
	running, _, waiting := s.stats()
	assert.Equal(t, []int{0, 0}, []int{running, waiting})
}

// Once the slots close (the worker drains), what waits is answered at
// once, unstarted, and nothing more starts.
func TestSlotsCloseHandsBackWhatWaits(t *testing.T) {
	s := newSlots(1, time.Second, nil, nil)
	ws := uuid.New()
	first := acquireAsync(s, context.Background(), ws, "", "")
	<-first.done
	w := acquireAsync(s, context.Background(), ws, "", "")
	queued(t, s, 1)
	s.close()
	<-w.done
	assert.ErrorIs(t, w.err, errStopping)
	late := acquireAsync(s, context.Background(), uuid.New(), "", "")
	<-late.done
	assert.ErrorIs(t, late.err, errStopping)
	first.release(CallResult{})
	running, _, waiting := s.stats()
	assert.Equal(t, []int{0, 0}, []int{running, waiting})
}

// Messages of one key start in the order the broker handed them out (their
// reservations), whatever order their goroutines ask in.
func TestSlotsKeepTheBrokersOrderOfAKey(t *testing.T) {
	s := newSlots(4, time.Second, nil, nil)
	ws := uuid.New()
	first, second := s.reserve("catalog/1"), s.reserve("catalog/1")

	late := &waiter{done: make(chan struct{})}
	go func() {
		defer close(late.done)
		late.release, late.wait, late.err = s.acquire(context.Background(), ws, "", "catalog/1", second)
	}()
	queued(t, s, 1)
	assert.False(t, late.ended(), "the second handed out started before the first asked")

	release, wait, err := s.acquire(context.Background(), ws, "", "catalog/1", first)
	require.NoError(t, err)
	require.Nil(t, wait)
	assert.False(t, late.ended(), "the key's second runs while its first does")
	release(CallResult{})
	<-late.done
	require.NoError(t, late.err)
	late.release(CallResult{})

	// A reservation dropped (its message never asks) holds nothing up.
	dropped, third := s.reserve("catalog/2"), s.reserve("catalog/2")
	s.cancel(dropped)
	release, _, err = s.acquire(context.Background(), ws, "", "catalog/2", third)
	require.NoError(t, err)
	release(CallResult{})
}

// A key's line parked for its destination takes with it the reservations
// not yet in a line and the key's later arrivals, so none of them passes
// the parked ones.
func TestSlotsParkAKeysWholeLine(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	gate := &fakeGate{refuse: map[string]time.Time{"shopify/a": now.Add(time.Minute)}}
	s := newSlots(2, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()
	first, reservation := s.reserve("catalog/1"), s.reserve("catalog/1")
	head := &waiter{done: make(chan struct{})}
	go func() {
		defer close(head.done)
		head.release, head.wait, head.err = s.acquire(context.Background(), ws, "shopify/a", "catalog/1", first)
	}()
	<-head.done
	require.NotNil(t, head.wait)

	_, wait, err := s.acquire(context.Background(), ws, "shopify/a", "catalog/1", reservation)
	require.NoError(t, err)
	require.NotNil(t, wait, "a reservation of the parked line is parked when it asks")
	assert.True(t, wait.until.After(head.wait.until))

	_, later, err := s.acquire(context.Background(), ws, "", "catalog/1", nil)
	require.NoError(t, err)
	require.NotNil(t, later, "a later arrival of the key waits behind the parked line")
	assert.True(t, later.until.After(wait.until))
}

// A platform that is down parks one message per cooldown to probe it and
// the others long; the first call to it that is answered wakes them, with
// the reason they were parked with, for each workspace.
func TestSlotsParkAnOutageLongButForOneProbe(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	cooldown := now.Add(30 * time.Second)
	gate := &fakeGate{of: "shopify", refuse: map[string]time.Time{"shopify/a": cooldown, "shopify/b": cooldown, "shopify/c": cooldown, "shopify/e": cooldown}}
	s := newSlots(1, 2*time.Second, gate, func() time.Time { return now })
	type wake struct {
		destination string
		workspaces  map[uuid.UUID]int
	}
	woken := make(chan wake, 1)
	s.woken = func(d string, ws map[uuid.UUID]int) { woken <- wake{d, ws} }
	ws1, ws2 := uuid.New(), uuid.New()

	probe := acquireAsync(s, context.Background(), ws1, "shopify/a", "")
	<-probe.done
	sleeper := acquireAsync(s, context.Background(), ws1, "shopify/b", "catalog/1")
	<-sleeper.done
	probe2 := acquireAsync(s, context.Background(), ws2, "shopify/e", "")
	<-probe2.done
	other := acquireAsync(s, context.Background(), ws2, "shopify/c", "")
	<-other.done
	for _, p := range []*waiter{probe, probe2} {
		require.NotNil(t, p.wait)
		assert.False(t, p.wait.until.Before(cooldown), "each workspace's probe comes back when the cooldown ends")
		assert.True(t, p.wait.until.Before(cooldown.Add(2*time.Second)))
	}
	for _, w := range []*waiter{sleeper, other} {
		require.NotNil(t, w.wait)
		assert.False(t, w.wait.until.Before(now.Add(DefaultOutageWait)), "the others sleep")
		assert.Equal(t, model.JobWait{Kind: model.JobWaitOutage, For: "shopify", Reason: "waiting for shopify: breaker_open"}, w.wait.wait)
	}
	select {
	case w := <-woken:
		t.Fatalf("woken before any answer: %+v", w)
	default:
	}

	// A later arrival of the sleeper's key waits behind it...
	_, behind, err := s.acquire(context.Background(), ws1, "", "catalog/1", nil)
	require.NoError(t, err)
	require.NotNil(t, behind)
	assert.True(t, behind.until.After(sleeper.wait.until))

	// ...until a call to the platform is answered: then all are woken.
	up := acquireAsync(s, context.Background(), ws2, "shopify/d", "")
	<-up.done
	require.NotNil(t, up.release)
	up.release(CallResult{Throttled: true})
	w := <-woken
	assert.Equal(t, "shopify", w.destination)
	assert.Equal(t, sleeper.wait.wait.For, w.destination)
	assert.Equal(t, map[uuid.UUID]int{ws1: 2, ws2: 1}, w.workspaces, "the probes are not asleep; the key's later arrival is")
	// A job this wake brought back waited for its platform: it wakes
	// neither its platform's sleepers again nor its shop's, which it did
	// not wait for.
	s.answeredAfterWait(ws1, "shopify/b", sleeper.wait.wait.Kind, sleeper.wait.wait.For)
	select {
	case w := <-woken:
		t.Fatalf("woken again by a job this wake brought back: %+v", w)
	default:
	}
	_, behind, err = s.acquire(context.Background(), ws1, "", "catalog/1", nil)
	require.NoError(t, err)
	require.NotNil(t, behind, "the key's arrivals still let the woken ones pass")
	assert.False(t, behind.until.After(now.Add(3*time.Second)), "but only for a hold")
}

// A failed call wakes nothing: the destination is still down.
func TestSlotsWakeNothingOnAFailure(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	gate := &fakeGate{refuse: map[string]time.Time{"shopify/a": now.Add(time.Minute)}}
	clock := now
	s := newSlots(1, 2*time.Second, gate, func() time.Time { return clock }) // read under s.mu
	woke := false
	s.woken = func(string, map[uuid.UUID]int) { woke = true }
	ws := uuid.New()
	for range 2 {
		<-acquireAsync(s, context.Background(), ws, "shopify/a", "").done
	}
	require.Len(t, s.asleep, 1)
	gate.mu.Lock()
	delete(gate.refuse, "shopify/a")
	gate.mu.Unlock()
	s.mu.Lock()
	clock = now.Add(2 * time.Minute) // the cooldown is over: the probe goes
	s.mu.Unlock()
	call := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	<-call.done
	call.release(CallResult{Failed: true})
	assert.Len(t, s.asleep, 1, "still asleep")
	assert.False(t, woke)
}

// Past the messages waiting in memory, those for a paced destination are
// parked a turn each at its pace, one after another, across arrivals.
func TestSlotsBookPacedMessagesATurnEach(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	ready := now.Add(100 * time.Millisecond)
	every := 500 * time.Millisecond
	gate := &fakeGate{why: WhyPaced, every: every, refuse: map[string]time.Time{"shopify/a": ready}}
	s := newSlots(1, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()
	blocker := acquireAsync(s, context.Background(), ws, "", "")
	<-blocker.done
	var inMemory []*waiter
	for i := range inMemoryPerDestination {
		inMemory = append(inMemory, acquireAsync(s, context.Background(), ws, "shopify/a", ""))
		queued(t, s, i+1)
	}
	var parked []*waiter
	for i := range 3 {
		parked = append(parked, acquireAsync(s, context.Background(), ws, "shopify/a", ""))
		queued(t, s, inMemoryPerDestination+i+1)
	}
	blocker.release(CallResult{}) // pumps: the scan parks what is past the memory's share
	first := ready.Add(inMemoryPerDestination * every)
	for i, w := range parked {
		<-w.done
		require.NotNil(t, w.wait)
		assert.Equal(t, first.Add(time.Duration(i)*every), w.wait.until, "turn %d", i)
	}
	late := acquireAsync(s, context.Background(), ws, "shopify/a", "") // its arrival pumps again
	<-late.done
	require.NotNil(t, late.wait)
	assert.Equal(t, first.Add(3*every), late.wait.until, "a later arrival's turn is after those booked")
	for _, w := range inMemory {
		assert.False(t, w.ended(), "the memory's share waits in memory")
	}
}

// A busy destination whose calls end every 20 ms keeps a hold's worth
// of messages in memory (2 s ÷ 20 ms = 100, more than the 32 of a paced
// one): they start within the hold, and parking them would cost more than
// it saves. Those beyond are parked, a turn each after the ones in memory.
func TestSlotsKeepAHoldsWorthOfABusyDestinationInMemory(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	ready := now.Add(50 * time.Millisecond)
	every := 20 * time.Millisecond
	gate := &fakeGate{why: WhyBusy, every: every, refuse: map[string]time.Time{"webhook/a": ready}}
	s := newSlots(1, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()
	blocker := acquireAsync(s, context.Background(), ws, "", "")
	<-blocker.done
	const inMemory = 100
	var waiters []*waiter
	for i := range inMemory + 2 {
		waiters = append(waiters, acquireAsync(s, context.Background(), ws, "webhook/a", ""))
		queued(t, s, i+1)
	}
	blocker.release(CallResult{}) // pumps: the scan parks what is past the hold's worth
	first := ready.Add(inMemory * every)
	for i, w := range waiters[inMemory:] {
		<-w.done
		require.NotNil(t, w.wait)
		assert.Equal(t, first.Add(time.Duration(i)*every), w.wait.until, "turn %d", i)
	}
	for _, w := range waiters[:inMemory] {
		assert.False(t, w.ended(), "a hold's worth waits in memory")
	}
	_, _, waiting := s.stats()
	assert.Equal(t, inMemory, waiting)
}

// A job that waited for its destination to come back (a breaker, or a
// transient failure's retry) and then reaches it wakes its workspace's
// sleepers of its destination and its platform, whatever worker parked
// them (this one may have restarted since), once per rewakeAfter; a job
// that waited for a pace wakes nothing.
func TestSlotsLetAJobThatWaitedForAnOutageWakeItsWorkspace(t *testing.T) {
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	clock := now
	s := newSlots(1, 2*time.Second, nil, func() time.Time { return clock }) // read under s.mu
	woken := make(chan string, 8)
	s.woken = func(d string, ws map[uuid.UUID]int) { woken <- d }
	ws := uuid.New()
	wokenNow := func() []string {
		var got []string
		for range 2 {
			got = append(got, <-woken)
		}
		return got
	}

	for _, k := range []model.JobWaitKind{model.JobWaitPaced, model.JobWaitBusy, model.JobWaitPaused, model.JobWaitStateUnavailable,
		model.JobWaitThrottled, model.JobWaitOrdering, ""} {
		s.answeredAfterWait(ws, "shopify/a", k, "shopify/a")
	}
	s.answeredAfterWait(ws, "shopify/a", model.JobWaitOutage, "shopify/a")
	assert.ElementsMatch(t, []string{"shopify/a", "shopify"}, wokenNow())
	s.answeredAfterWait(ws, "shopify/a", model.JobWaitOutage, "shopify/a")
	s.answeredAfterWait(ws, "shopify/a", model.JobWaitRetry, "shopify/a")
	s.mu.Lock()
	clock = now.Add(rewakeAfter)
	s.mu.Unlock()
	s.answeredAfterWait(ws, "shopify/a", model.JobWaitRetry, "shopify/a")
	assert.ElementsMatch(t, []string{"shopify/a", "shopify"}, wokenNow(), "a retry after a failure wakes too, once per rewakeAfter")
	select {
	case d := <-woken:
		t.Fatalf("woken more than once per rewakeAfter, or for a pace: %s", d)
	default:
	}
}
