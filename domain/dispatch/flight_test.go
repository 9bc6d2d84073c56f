package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// gatedPublisher holds every publish until released, and counts the
// publishes in progress.
type gatedPublisher struct {
	mu       sync.Mutex
	gated    bool
	inFlight int
	maxSeen  int
	order    []uuid.UUID
	release  chan struct{}
}

func newGatedPublisher() *gatedPublisher { return &gatedPublisher{release: make(chan struct{})} }

func (g *gatedPublisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	g.mu.Lock()
	gated := g.gated
	g.inFlight++
	g.maxSeen = max(g.maxSeen, g.inFlight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	if gated {
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range msgs {
		g.order = append(g.order, m.ID)
	}
	return nil
}

func (g *gatedPublisher) setGated(b bool) { g.mu.Lock(); g.gated = b; g.mu.Unlock() }

func (g *gatedPublisher) state() (inFlight, maxSeen, published int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight, g.maxSeen, len(g.order)
}

// warmUp publishes one event so the Dispatcher knows the broker answers:
// until then it runs one batch at a time.
func warmUp(t *testing.T, e *env, d *dispatch.Dispatcher) {
	t.Helper()
	e.appendEvents(t, uuid.New(), 1)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
}

// runUntilStopped runs d until stop is called (or the test ends); stop
// returns once Run has.
func runUntilStopped(t *testing.T, d *dispatch.Dispatcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// No more batches are in flight than Concurrency, however many workspaces
// are due, and every one gets through as the broker answers.
func TestBatchesInFlightStayWithinTheConcurrencyBound(t *testing.T) {
	e := newEnv(t)
	pub := newGatedPublisher()
	d := e.dispatcher(t, dispatch.Config{Concurrency: 2}, pub)
	warmUp(t, e, d)
	pub.setGated(true)
	for range 6 {
		e.appendEvents(t, uuid.New(), 3)
	}
	runInBackground(t, d)

	require.Eventually(t, func() bool { n, _, _ := pub.state(); return n == 2 }, 5*time.Second, time.Millisecond)
	// Let the publishes through one by one until every event is out.
	for {
		if _, _, n := pub.state(); n == 1+6*3 {
			break
		}
		select {
		case pub.release <- struct{}{}:
		case <-time.After(10 * time.Millisecond): // look again
		}
	}
	_, maxSeen, _ := pub.state()
	assert.Equal(t, 2, maxSeen, "publishes in progress at once")
}

// orderedClaims runs the claim and mark through the unit of work and
// records, in order, the first event id of each claim and of each mark.
type orderedClaims struct {
	uow            ports.UnitOfWork
	mu             sync.Mutex
	claims, marks  []uuid.UUID
	secondClaimed  chan struct{}
	secondClaimOne sync.Once
}

func (c *orderedClaims) ClaimDue(ctx context.Context, ws uuid.UUID, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (ports.Claim, error) {
	var claim ports.Claim
	err := c.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		claim, err = tx.OutboxDispatch().ClaimDue(ctx, owner, now, lease, limit, maxAttempts)
		return err
	})
	if len(claim.Events) > 0 {
		c.mu.Lock()
		c.claims = append(c.claims, claim.Events[0].ID)
		if len(c.claims) == 3 { // the warm-up's, then two of the workspace
			c.secondClaimOne.Do(func() { close(c.secondClaimed) })
		}
		c.mu.Unlock()
	}
	return claim, err
}

func (c *orderedClaims) MarkDispatched(ctx context.Context, ws uuid.UUID, owner string, ids []uuid.UUID, at time.Time) (int, error) {
	var n int
	err := c.uow.Transact(ctx, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		n, err = tx.OutboxDispatch().MarkDispatched(ctx, owner, ids, at)
		return err
	})
	c.mu.Lock()
	c.marks = append(c.marks, ids[0])
	c.mu.Unlock()
	return n, err
}

// Batches of one workspace overlap (the next is claimed while the first is
// with the broker), yet reach the broker, and are marked, in claim order:
// the first publish is held until the second batch is claimed, and the
// second must still wait for it.
func TestAWorkspacesBatchesPublishAndMarkInClaimOrder(t *testing.T) {
	e := newEnv(t)
	claims := &orderedClaims{uow: e.uow, secondClaimed: make(chan struct{})}
	var mu sync.Mutex
	var order []uuid.UUID
	first := true
	pub := publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
		mu.Lock()
		hold := first && len(order) > 0 // the warm-up goes through
		if hold {
			first = false
		}
		mu.Unlock()
		if hold {
			select {
			case <-claims.secondClaimed:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			order = append(order, m.ID)
		}
		return nil
	})
	d, err := dispatch.New(dispatch.Config{Owner: "d", Batch: 10}, dispatch.Deps{
		UnitOfWork: e.uow, Claims: claims, Discovery: e.disc, Publisher: pub, Clock: e.clock, Logger: e.logger(),
	})
	require.NoError(t, err)
	warmUp(t, e, d)
	ws := uuid.New()
	ids := e.appendEvents(t, ws, 40)
	runInBackground(t, d)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 1+len(ids)
	}, 5*time.Second, time.Millisecond)
	mu.Lock()
	assert.Equal(t, ids, order[1:], "published in claim order")
	mu.Unlock()
	require.Eventually(t, func() bool {
		claims.mu.Lock()
		defer claims.mu.Unlock()
		return len(claims.marks) == 5 // the warm-up's and four batches of ten
	}, 5*time.Second, time.Millisecond)
	claims.mu.Lock()
	assert.Equal(t, claims.claims, claims.marks, "marked in claim order")
	claims.mu.Unlock()
	for _, id := range ids {
		assert.Equal(t, model.OutboxDispatched, e.event(t, ws, id).Status)
	}
}

// Stopping Run settles what is in flight before it returns: a batch held
// by the broker is handed back, pending and uncounted, not left under a
// lease.
func TestRunReturnsOnlyOnceItsBatchesAreSettled(t *testing.T) {
	e := newEnv(t)
	pub := newGatedPublisher()
	d := e.dispatcher(t, dispatch.Config{Concurrency: 3}, pub)
	warmUp(t, e, d)
	pub.setGated(true)
	var all []uuid.UUID
	var wss []uuid.UUID
	for range 3 {
		ws := uuid.New()
		wss = append(wss, ws)
		all = append(all, e.appendEvents(t, ws, 2)...)
	}
	stop := runUntilStopped(t, d)
	require.Eventually(t, func() bool { n, _, _ := pub.state(); return n == 3 }, 5*time.Second, time.Millisecond)
	stop()
	for i, ws := range wss {
		for _, id := range all[2*i : 2*i+2] {
			ev := e.event(t, ws, id)
			assert.Equal(t, model.OutboxPending, ev.Status)
			assert.Zero(t, ev.AttemptCount)
		}
	}
	assert.Contains(t, e.logs.String(), `msg="dispatcher stopped: no event left under its lease" component=dispatcher owner=dispatcher-1 published=0 handed_back=6`,
		"the stop says what it handed back")
}

// A Dispatcher stopped while it waits for work says so too.
func TestRunLogsItsStopWhenIdle(t *testing.T) {
	e := newEnv(t)
	d := e.dispatcher(t, dispatch.Config{}, &recorder{})
	warmUp(t, e, d)
	stop := runUntilStopped(t, d)
	stop()
	assert.Contains(t, e.logs.String(), `msg="dispatcher stopped: no event left under its lease"`)
}

// A batch whose predecessor in its workspace went back unpublished (the
// broker did not take it) is not published ahead of it: it goes back too,
// uncounted, and the workspace's events still reach the broker in order.
func TestABatchBehindOneHandedBackIsHandedBackToo(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	release := make(chan struct{})
	var mu sync.Mutex
	var order []uuid.UUID
	first := true
	pub := publisherFunc(func(ctx context.Context, msgs ...ports.Message) error {
		if msgs[0].WorkspaceID == ws {
			mu.Lock()
			fail := first
			first = false
			mu.Unlock()
			if fail {
				<-release
				return fmt.Errorf("connection reset: %w", ports.ErrBrokerUnreachable)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if m.WorkspaceID == ws {
				order = append(order, m.ID)
			}
		}
		return nil
	})
	d := e.dispatcher(t, dispatch.Config{Batch: 2, Concurrency: 2, PollInterval: 10 * time.Millisecond}, pub)
	warmUp(t, e, d)
	ids := e.appendEvents(t, ws, 4)
	runInBackground(t, d)
	// Both batches claimed, the first with the broker.
	e.waitIDs(t, ws, ids, func(ev model.OutboxEvent) bool { return ev.Status == model.OutboxDispatching })
	close(release)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == len(ids)
	}, 5*time.Second, time.Millisecond)
	mu.Lock()
	assert.Equal(t, ids, order, "published in order")
	mu.Unlock()
	for _, id := range ids {
		assert.Zero(t, e.event(t, ws, id).AttemptCount)
	}
}

// markGatedClaims runs the claim and mark through the unit of work, and
// holds the mark of the batch holding gated until release is closed.
type markGatedClaims struct {
	uow     ports.UnitOfWork
	gated   uuid.UUID
	release chan struct{}
}

func (c *markGatedClaims) ClaimDue(ctx context.Context, ws uuid.UUID, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (ports.Claim, error) {
	return ports.Query(ctx, c.uow, ws, func(ctx context.Context, tx ports.Tx) (ports.Claim, error) {
		return tx.OutboxDispatch().ClaimDue(ctx, owner, now, lease, limit, maxAttempts)
	})
}

func (c *markGatedClaims) MarkDispatched(ctx context.Context, ws uuid.UUID, owner string, ids []uuid.UUID, at time.Time) (int, error) {
	if slices.Contains(ids, c.gated) {
		<-c.release
	}
	return ports.Query(ctx, c.uow, ws, func(ctx context.Context, tx ports.Tx) (int, error) {
		return tx.OutboxDispatch().MarkDispatched(ctx, owner, ids, at)
	})
}

// A batch handed back because the one before it was handed back keeps its
// place until that one has settled: the next claim of the workspace must
// not publish its events while the earlier ones are still leased. Three
// batches in flight: the first published, its mark held; the second found
// the broker unreachable and waits for the first's mark before it goes
// back; the third goes back behind it. The next claim takes the events
// back in order only once the second's are pending again. synctest.Wait
// lets every goroutine of the Dispatcher run until it blocks, so the next
// claim has had every chance to overtake before the first mark is let go.
func TestABatchHandedBackBehindOneHandedBackKeepsItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ws := uuid.New()
		var ids []uuid.UUID
		pub := &holdingBroker{
			ws: ws, hold: func(msgs []ports.Message) bool { return msgs[0].ID == ids[2] },
			err: fmt.Errorf("connection reset: %w", ports.ErrBrokerUnreachable), release: make(chan struct{}),
		}
		claims := &markGatedClaims{uow: e.uow, release: make(chan struct{})}
		d, err := dispatch.New(dispatch.Config{Owner: "d", Batch: 2, Concurrency: 3, PollInterval: 10 * time.Millisecond}, dispatch.Deps{
			UnitOfWork: e.uow, Claims: claims, Discovery: e.disc, Publisher: pub, Clock: e.clock, Logger: e.logger(),
		})
		require.NoError(t, err)
		warmUp(t, e, d)
		ids = e.appendEvents(t, ws, 8)
		claims.gated = ids[0]
		runInBackground(t, d)

		synctest.Wait() // three batches claimed, the second with the broker
		for i, id := range ids[:6] {
			require.Equal(t, model.OutboxDispatching, e.event(t, ws, id).Status, "event %d", i)
		}
		close(pub.release)
		synctest.Wait() // the second and third handed back, or waiting to be
		close(claims.release)

		e.waitIDs(t, ws, ids, dispatched)
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, pub.firstSeen(ids), "the workspace's events reach the broker in order")
		for _, id := range ids {
			assert.Zero(t, e.event(t, ws, id).AttemptCount)
		}
	})
}

// holdingBroker holds the first publish of workspace ws that hold picks
// until release is closed, then answers it with err; it records, in
// order, the events of ws it accepted.
type holdingBroker struct {
	ws      uuid.UUID
	hold    func(msgs []ports.Message) bool
	err     error
	release chan struct{}

	mu       sync.Mutex
	held     bool
	accepted []uuid.UUID
}

func (b *holdingBroker) Publish(_ context.Context, msgs ...ports.Message) error {
	if msgs[0].WorkspaceID != b.ws {
		return nil
	}
	b.mu.Lock()
	hold := !b.held && b.hold(msgs)
	b.held = b.held || hold
	b.mu.Unlock()
	if hold {
		<-b.release
		if b.err != nil {
			return b.err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range msgs {
		b.accepted = append(b.accepted, m.ID)
	}
	return nil
}

// firstSeen is the order in which the broker first accepted the events of
// ids, by their index in ids.
func (b *holdingBroker) firstSeen(ids []uuid.UUID) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	index := map[uuid.UUID]int{}
	for i, id := range ids {
		index[id] = i
	}
	seen := map[uuid.UUID]bool{}
	var first []int
	for _, id := range b.accepted {
		if i, ok := index[id]; ok && !seen[id] {
			seen[id] = true
			first = append(first, i)
		}
	}
	return first
}

// failingClaims fails the claim of workspace ws numbered fail (from 0)
// once, and runs the others through the unit of work.
type failingClaims struct {
	markGatedClaims
	ws    uuid.UUID
	fail  int
	mu    sync.Mutex
	calls int
}

func (c *failingClaims) ClaimDue(ctx context.Context, ws uuid.UUID, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (ports.Claim, error) {
	if ws == c.ws {
		c.mu.Lock()
		call := c.calls
		c.calls++
		c.mu.Unlock()
		if call == c.fail {
			return ports.Claim{}, errors.New("connection reset by peer")
		}
	}
	return c.markGatedClaims.ClaimDue(ctx, ws, owner, now, lease, limit, maxAttempts)
}

// A batch whose claim failed (or found nothing) ends its turn only once
// the batch before it has ended its own: the workspace's next batch must
// not publish ahead of that one. The first batch is held by the broker;
// the second claim fails; the third must wait for the first. The test
// runs in a synctest bubble, so its clock moves only when every goroutine
// is blocked.
func TestABatchWhoseClaimFailedKeepsItsPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ws := uuid.New()
		pub := &holdingBroker{ws: ws, hold: func([]ports.Message) bool { return true }, release: make(chan struct{})}
		claims := &failingClaims{markGatedClaims: markGatedClaims{uow: e.uow}, ws: ws, fail: 1}
		d, err := dispatch.New(dispatch.Config{Owner: "d", Batch: 2, Concurrency: 3, PollInterval: 10 * time.Millisecond}, dispatch.Deps{
			UnitOfWork: e.uow, Claims: claims, Discovery: e.disc, Publisher: pub, Clock: e.clock, Logger: e.logger(),
		})
		require.NoError(t, err)
		warmUp(t, e, d)
		ids := e.appendEvents(t, ws, 4)
		runInBackground(t, d)

		// The first batch with the broker; the Dispatcher backs off after
		// the failed claim (for well under a second of the bubble's
		// clock) and claims again.
		time.Sleep(time.Second)
		synctest.Wait()
		close(pub.release)
		e.waitIDs(t, ws, ids, dispatched)
		assert.Equal(t, []int{0, 1, 2, 3}, pub.firstSeen(ids), "the workspace's events reach the broker in order")
	})
}
