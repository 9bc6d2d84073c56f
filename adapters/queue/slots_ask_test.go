package queue

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldGate answers each Try only once the test lets it (answer), so a
// test can look at the slots while the gate is being asked: the gate of
// a fleet is two Redis round trips away.
type heldGate struct {
	mu      sync.Mutex
	asked   map[string]int
	entered chan string // each Try's destination, as it starts
	answers chan Refusal
	// answersTo answer only the Trys of their destination: with two
	// destinations asked, a grant on answers may go to either, and, once
	// one's ask is answered, to a third that asks meanwhile.
	answersTo map[string]chan Refusal
	results   []CallResult
}

func newHeldGate() *heldGate {
	return &heldGate{asked: map[string]int{}, entered: make(chan string, 64), answers: make(chan Refusal), answersTo: map[string]chan Refusal{}}
}

// answersOf is d's answers (under mu).
func (g *heldGate) answersOf(d string) chan Refusal {
	c := g.answersTo[d]
	if c == nil {
		c = make(chan Refusal)
		g.answersTo[d] = c
	}
	return c
}

func (g *heldGate) Try(d string) (func(CallResult), Refusal) {
	g.mu.Lock()
	g.asked[d]++
	mine := g.answersOf(d)
	g.mu.Unlock()
	g.entered <- d
	var r Refusal
	select {
	case r = <-g.answers:
	case r = <-mine:
	}
	if !r.Until.IsZero() {
		return nil, r
	}
	return func(r CallResult) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.results = append(g.results, r)
	}, Refusal{}
}

// grant lets the Try waiting go with a permit.
func (g *heldGate) grant() { g.answers <- Refusal{} }

// grantTo lets the Try of d waiting go with a permit.
func (g *heldGate) grantTo(d string) { g.answerTo(d, Refusal{}) }

// answerTo answers the Try of d waiting with r (a permit if r is zero).
func (g *heldGate) answerTo(d string, r Refusal) {
	g.mu.Lock()
	c := g.answersOf(d)
	g.mu.Unlock()
	c <- r
}

func (g *heldGate) askedOf(d string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.asked[d]
}

// askHeld is a message of ws for dest whose ask the gate holds.
func askHeld(t *testing.T, s *slots, gate *heldGate, ws uuid.UUID, dest string) *waiter {
	t.Helper()
	w := acquireAsync(s, context.Background(), ws, dest, "")
	require.Equal(t, dest, <-gate.entered)
	return w
}

// asksAnswered waits until no ask of the gate is in flight in s: the
// refusals answered are remembered, and their tickets wait as they say.
func asksAnswered(t *testing.T, s *slots) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.asks.destinations) == 0
	}, 10*time.Second, time.Millisecond)
}

// assertIdle: nothing runs or waits in s, and no ask is counted in
// flight (what leaks otherwise: a slot, or an ask, kept for ever).
func assertIdle(t *testing.T, s *slots, msg string) {
	t.Helper()
	running, _, waiting := s.stats()
	assert.Equal(t, []int{0, 0}, []int{running, waiting}, msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.asks.destinations, "an ask counted in flight for ever")
}

// The slots ask the gate without holding their lock: while one message's
// destination is being asked, the others get their slots (the worker's
// 256 handlers queued behind two Redis round trips at a time before).
func TestSlotsAskTheGateOutsideTheirLock(t *testing.T) {
	gate := newHeldGate()
	s := newSlots(4, time.Second, gate, nil)
	ws := uuid.New()

	slow := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	require.Equal(t, "shopify/a", <-gate.entered)
	require.True(t, s.mu.TryLock(), "the slots' lock is held while the gate is asked")
	s.mu.Unlock()

	free := acquireAsync(s, context.Background(), ws, "", "")
	<-free.done
	require.NoError(t, free.err)
	assert.False(t, slow.ended())
	running, _, _ := s.stats()
	assert.Equal(t, 2, running, "the slot being asked for is held while it is asked")

	gate.grant()
	<-slow.done
	require.NoError(t, slow.err)
	require.NotNil(t, slow.release)
	slow.release(CallResult{})
	free.release(CallResult{})
	assert.Equal(t, []CallResult{{}}, gate.results)
	running, peak, waiting := s.stats()
	assert.Equal(t, []int{0, 2, 0}, []int{running, peak, waiting})
}

// Of one destination, one message asks at a time: the gate answers the
// next from what the first taught it (a refusal ends the asking), and a
// shop's backlog makes no burst of asks that its cap refuses.
func TestSlotsAskADestinationOneMessageAtATime(t *testing.T) {
	gate := newHeldGate()
	s := newSlots(4, time.Second, gate, nil)
	ws := uuid.New()

	first := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	require.Equal(t, "shopify/a", <-gate.entered)
	second := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	queued(t, s, 2)
	other := acquireAsync(s, context.Background(), ws, "shopify/b", "")
	require.Equal(t, "shopify/b", <-gate.entered, "another shop is asked meanwhile")
	assert.Equal(t, 1, gate.askedOf("shopify/a"), "a second ask of a destination while its first is unanswered")

	gate.grantTo("shopify/a") // each of the two asks in flight (the second may ask as the first is answered)
	gate.grantTo("shopify/b")
	<-first.done
	<-other.done
	require.Equal(t, "shopify/a", <-gate.entered, "the second asks once the first is answered")
	gate.grant()
	<-second.done
	for _, w := range []*waiter{first, second, other} {
		require.NoError(t, w.err)
		w.release(CallResult{})
	}
	assert.Equal(t, 2, gate.askedOf("shopify/a"))
}

// A refusal answered to an ask gives the slot back, to the next message,
// and the refused message waits as the refusal says (here: parked, the
// refusal longer than the hold).
func TestSlotsGiveTheSlotBackWhenTheGateRefuses(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	gate := newHeldGate()
	s := newSlots(1, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()

	refused := askHeld(t, s, gate, ws, "shopify/a")
	next := acquireAsync(s, context.Background(), ws, "", "")
	queued(t, s, 2)
	assert.False(t, next.ended(), "a second slot given while the only one is asked for")

	gate.answers <- Refusal{Until: now.Add(time.Minute), Why: WhyBreakerOpen}
	<-refused.done
	require.NotNil(t, refused.wait, "refused for longer than the hold: parked")
	<-next.done
	require.NoError(t, next.err)
	next.release(CallResult{})
	running, _, waiting := s.stats()
	assert.Equal(t, []int{0, 0}, []int{running, waiting})
}

// A worker that drains while a message's gate is asked hands that
// message back unstarted, and gives back the call the gate granted it.
func TestSlotsClosedWhileAskingGiveTheGrantBack(t *testing.T) {
	gate := newHeldGate()
	s := newSlots(2, time.Second, gate, nil)
	w := acquireAsync(s, context.Background(), uuid.New(), "shopify/a", "")
	require.Equal(t, "shopify/a", <-gate.entered)
	s.close()
	gate.grant()
	<-w.done
	assert.ErrorIs(t, w.err, errStopping)
	assert.Equal(t, []CallResult{{Abandoned: true}}, gate.results)
	running, _, waiting := s.stats()
	assert.Equal(t, []int{0, 0}, []int{running, waiting})
}

// Shops of a platform whose pace refused lately are asked one at a
// time, as every ask spends the one bucket; other platforms' shops, and
// the platform once its pace has not refused for a hold, in parallel.
func TestSlotsAskAPacedPlatformOneShopAtATime(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	at := func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	gate := newHeldGate()
	s := newSlots(8, 2*time.Second, gate, at)
	ws := uuid.New()

	first := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	require.Equal(t, "shopify/a", <-gate.entered)
	// The platform's pace: the next token in 100 ms.
	gate.answers <- Refusal{Until: now.Add(100 * time.Millisecond), Why: WhyPaced, Of: "shopify"}
	asksAnswered(t, s)

	clock.Lock()
	now = now.Add(100 * time.Millisecond)
	clock.Unlock()
	second := acquireAsync(s, context.Background(), ws, "shopify/b", "")
	require.Equal(t, "shopify/a", <-gate.entered, "the token's first asks")
	queued(t, s, 2)
	amazon := acquireAsync(s, context.Background(), ws, "amazon/c", "")
	require.Equal(t, "amazon/c", <-gate.entered)
	assert.Equal(t, 0, gate.askedOf("shopify/b"), "two of a paced platform's shops asked at once")
	gate.grantTo("shopify/a") // each of the two asks in flight (shopify/b may ask as shopify/a is answered)
	gate.grantTo("amazon/c")
	<-first.done
	<-amazon.done
	require.Equal(t, "shopify/b", <-gate.entered)
	gate.grant()
	<-second.done

	// A hold later without a pace refusal, the platform's shops ask together.
	clock.Lock()
	now = now.Add(3 * time.Second)
	clock.Unlock()
	c := acquireAsync(s, context.Background(), ws, "shopify/c", "")
	require.Equal(t, "shopify/c", <-gate.entered)
	d := acquireAsync(s, context.Background(), ws, "shopify/d", "")
	require.Equal(t, "shopify/d", <-gate.entered)
	gate.grant()
	gate.grant()
	for _, w := range []*waiter{first, second, amazon, c, d} {
		<-w.done
		require.NoError(t, w.err)
		w.release(CallResult{})
	}
}

// A message whose context ends as its slot is reserved for its ask
// (the reservation unread) gives the slot back: nothing runs, nothing
// is held. Its goroutine waits in select when the context ends, so it
// leaves by the context's way; were it to read the reservation first,
// it asks, and runs.
func TestSlotsGiveBackASlotReservedForAMessageWhoseContextEnded(t *testing.T) {
	gate := &fakeGate{}
	s := newSlots(1, time.Second, gate, nil)
	ws := uuid.New()
	blocker := acquireAsync(s, context.Background(), ws, "", "")
	<-blocker.done
	ctx, cancel := context.WithCancel(context.Background())
	w := acquireAsync(s, ctx, ws, "shopify/a", "")
	queued(t, s, 1)

	s.mu.Lock()
	cancel()
	s.size++ // a slot frees: reserved for w's ask, while w's goroutine leaves
	s.pump()
	s.mu.Unlock()
	<-w.done
	if w.err == nil { // it read the reservation first: it asked, and runs
		w.release(CallResult{})
	}
	blocker.release(CallResult{})
	assertIdle(t, s, "a slot kept by a message gone")
}

// A message whose slot is reserved for its ask, unread, when the worker
// drains and then its context ends gives the slot back once: close took
// it out of the lines already (it was answered nothing, as it asks).
func TestSlotsGiveBackASlotReservedWhenClosedThenTheContextEnds(t *testing.T) {
	gate := newHeldGate()
	s := newSlots(1, time.Second, gate, nil)
	blocker := acquireAsync(s, context.Background(), uuid.New(), "", "")
	<-blocker.done
	// Several, each of its own shop (asked in parallel): a goroutine that
	// read its reservation before its context ended would ask instead.
	const n = 8
	var ws []*waiter
	var cancels []context.CancelFunc
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		ws = append(ws, acquireAsync(s, ctx, uuid.New(), "amazon/"+string(rune('a'+i)), ""))
		queued(t, s, i+1)
	}

	s.mu.Lock()
	for _, cancel := range cancels {
		cancel()
	}
	s.size += n // slots free: each reserved for its message's ask
	s.pump()
	s.shut() // the worker drains (close) before their goroutines read them
	s.mu.Unlock()
	go func() { // any that read its reservation first asks: refuse it
		for range gate.entered {
			gate.answers <- Refusal{Until: time.Now().Add(time.Minute), Why: WhyBreakerOpen}
		}
	}()
	for _, w := range ws {
		<-w.done
		assert.Error(t, w.err)
	}
	blocker.release(CallResult{})
	close(gate.entered)
	assertIdle(t, s, "a slot kept, or given back twice")
}

// A call of a destination that ends while the destination is asked for
// another message lets the message ask again, refused busy or not: the
// gate may have read the cap full before the call ended, and the call's
// end, which forgets a busy refusal, came before the refusal was
// remembered. (The pump asked under the lock, so the end came after.)
func TestSlotsAskAgainWhenACallEndedWhileTheDestinationWasAsked(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	gate := newHeldGate()
	s := newSlots(2, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()

	running := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	require.Equal(t, "shopify/a", <-gate.entered)
	gate.grant()
	<-running.done
	require.NoError(t, running.err)

	next := acquireAsync(s, context.Background(), ws, "shopify/a", "")
	require.Equal(t, "shopify/a", <-gate.entered)
	running.release(CallResult{}) // while the gate decides from the cap full
	gate.answers <- Refusal{Until: now.Add(50 * time.Millisecond), Why: WhyBusy, Every: 100 * time.Millisecond}

	require.Eventually(t, func() bool { return gate.askedOf("shopify/a") == 3 }, 10*time.Second, time.Millisecond,
		"the message waits out a busy refusal its destination's cap no longer makes")
	gate.grant()
	<-next.done
	require.NoError(t, next.err)
	require.Nil(t, next.wait)
	next.release(CallResult{})
	r, _, waiting := s.stats()
	assert.Equal(t, []int{0, 0}, []int{r, waiting})
}

// A workspace whose two messages' asks are both refused keeps the turn
// it had, whichever refusal comes first: each reservation took a turn
// (the second's "before" is the first's), and the first refused, no
// longer the workspace's last, must not leave the second to restore it.
func TestSlotsKeepAWorkspacesTurnWhenItsAsksAreRefusedOutOfOrder(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	gate := newHeldGate()
	s := newSlots(4, 2*time.Second, gate, func() time.Time { return now })
	ws := uuid.New()

	a := askHeld(t, s, gate, ws, "shopify/a")
	b := askHeld(t, s, gate, ws, "amazon/b")
	down := Refusal{Until: now.Add(time.Minute), Why: WhyBreakerOpen}
	gate.answerTo("shopify/a", down) // the first reserved, refused first
	<-a.done
	gate.answerTo("amazon/b", down)
	<-b.done
	require.NotNil(t, a.wait)
	require.NotNil(t, b.wait)

	s.mu.Lock()
	defer s.mu.Unlock()
	_, served := s.served[ws]
	assert.False(t, served, "a workspace never served counted served by a refused ask")
	assert.Zero(t, s.running)
}
