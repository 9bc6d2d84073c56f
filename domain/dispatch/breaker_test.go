package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// errRefused is what a queue adapter returns while the broker is down.
var errRefused = fmt.Errorf("queue: publish 1 message(s) to once.x: dial tcp 10.1.2.3:6379: connect: connection refused: %w", ports.ErrBrokerUnreachable)

func unreachable([]ports.Message) error { return errRefused }

// outageEnv is an env with events in three workspaces and a Dispatcher
// whose observer is recorded.
type outageEnv struct {
	*env
	pub *recorder
	obs *countingObserver
	d   *dispatch.Dispatcher
	ids map[uuid.UUID][]uuid.UUID // per workspace
}

func newOutageEnv(t *testing.T, cfg dispatch.Config, perWorkspace int) *outageEnv {
	t.Helper()
	o := &outageEnv{env: newEnv(t), pub: &recorder{}, obs: &countingObserver{}, ids: map[uuid.UUID][]uuid.UUID{}}
	for range 3 {
		ws := uuid.New()
		o.ids[ws] = o.appendEvents(t, ws, perWorkspace)
	}
	cfg.Owner = "dispatcher-1"
	d, err := dispatch.New(cfg, dispatch.Deps{
		UnitOfWork: o.uow, Discovery: o.disc, Publisher: o.pub, Clock: o.clock, Logger: o.logger(), Observer: o.obs,
	})
	require.NoError(t, err)
	o.d = d
	return o
}

// publishAll runs rounds until one publishes nothing.
func (o *outageEnv) publishAll(t *testing.T) {
	t.Helper()
	for {
		res, err := o.d.RunOnce(context.Background())
		require.NoError(t, err)
		if res.Published == 0 {
			return
		}
	}
}

func (o *outageEnv) events(t *testing.T) []model.OutboxEvent {
	t.Helper()
	var all []model.OutboxEvent
	for ws, ids := range o.ids {
		for _, id := range ids {
			all = append(all, o.event(t, ws, id))
		}
	}
	return all
}

// A ten-minute broker outage with the default attempts and backoff: every
// round probes the broker once (the breaker lets one publish through per
// round here, its wait being a nanosecond; by default it is 5 s), no
// attempt is spent, nothing is dead-lettered, and every event goes out once
// the broker is back. The breaker's transitions are logged and observed
// once each.
func TestABrokerOutageSpendsNoAttemptsAndLosesNothing(t *testing.T) {
	o := newOutageEnv(t, dispatch.Config{BreakerOpen: time.Nanosecond}, 5)
	o.pub.setFail(unreachable)

	const rounds = 120 // 10 minutes at 5 s per round
	var total dispatch.Result
	for range rounds {
		res, err := o.d.RunOnce(context.Background())
		require.NoError(t, err)
		total = sum(total, res)
		o.clock.Advance(5 * time.Second)
	}
	assert.Zero(t, total.Published)
	assert.Zero(t, total.Failed, "no attempt counted")
	assert.Zero(t, total.DeadLettered)
	assert.Error(t, o.d.Paused())
	// Three failures in a row open the breaker (round one); after that one
	// probe per round.
	assert.LessOrEqual(t, o.pub.calls, dispatch.DefaultBreakerFailures+rounds-1, "at most one probe per round")
	assert.Greater(t, o.pub.calls, rounds/2, "and a probe in (nearly) every round")
	for _, e := range o.events(t) {
		assert.Equal(t, model.OutboxPending, e.Status)
		assert.Zero(t, e.AttemptCount, "event %s", e.ID)
		assert.Contains(t, e.LastError, "connection refused")
		assert.False(t, e.NextAttemptAt.After(o.clock.Now()), "due as soon as the broker is back, not backed off")
	}

	o.pub.setFail(nil)
	o.publishAll(t)
	assert.NoError(t, o.d.Paused())
	counts := o.pub.countByID()
	for _, e := range o.events(t) {
		assert.Equal(t, model.OutboxDispatched, e.Status)
		assert.Zero(t, e.AttemptCount)
		assert.Equal(t, 1, counts[e.ID], "event %s published once", e.ID)
	}
	assert.Equal(t, []bool{false, true}, o.obs.brokerUp)
	logs := o.logs.String()
	assert.Equal(t, 1, strings.Count(logs, "broker unreachable: publishing paused"), logs)
	assert.Equal(t, 1, strings.Count(logs, "broker reachable again"), logs)
	assert.NotContains(t, logs, "publish failed", "an outage is not logged per event")
}

// A broker that answers, but is set up otherwise than once was told (a
// Redis Cluster node reached as a single node answers MOVED), is the
// broker's fault too: the breaker opens, no attempt is spent, nothing is
// dead-lettered however long it lasts, the events keep the reason, the
// log says "misconfigured" once, as an error, and Paused says why until
// it is fixed.
func TestAMisconfiguredBrokerSpendsNoAttempts(t *testing.T) {
	o := newOutageEnv(t, dispatch.Config{BreakerOpen: time.Nanosecond, MaxAttempts: 2}, 2)
	require.NoError(t, o.d.Paused())
	moved := fmt.Errorf("queue: publish 1 message(s) to once.x: %w: MOVED 3999 10.1.2.3:7001", ports.ErrBrokerMisconfigured)
	o.pub.setFail(func([]ports.Message) error { return moved })

	var total dispatch.Result
	for range 20 {
		res, err := o.d.RunOnce(context.Background())
		require.NoError(t, err)
		total = sum(total, res)
		o.clock.Advance(5 * time.Second)
	}
	assert.Zero(t, total.Failed, "no attempt counted")
	assert.Zero(t, total.DeadLettered)
	assert.Error(t, o.d.Paused())
	paused := o.d.Paused()
	require.Error(t, paused)
	assert.Contains(t, paused.Error(), "the broker is misconfigured")
	assert.Contains(t, paused.Error(), "MOVED")
	assert.NotContains(t, paused.Error(), "10.1.2.3", "sanitized")
	for _, e := range o.events(t) {
		assert.Equal(t, model.OutboxPending, e.Status)
		assert.Zero(t, e.AttemptCount)
		assert.Contains(t, e.LastError, "MOVED")
	}
	logs := o.logs.String()
	assert.Equal(t, 1, strings.Count(logs, "broker misconfigured: publishing paused"), logs)
	assert.Contains(t, logs, "level=ERROR msg=\"broker misconfigured")

	o.pub.setFail(nil)
	o.publishAll(t)
	assert.NoError(t, o.d.Paused())
	assert.Equal(t, []bool{false, true}, o.obs.brokerUp)
}

// While the breaker is open a round claims nothing and calls no broker:
// the Dispatcher backs off as a whole, not event by event.
func TestAnOpenBreakerLeavesTheOutboxAlone(t *testing.T) {
	o := newOutageEnv(t, dispatch.Config{BreakerFailures: 1, BreakerOpen: time.Hour}, 2)
	o.pub.setFail(unreachable)

	res, err := o.d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Postponed: 2}, res, "the first workspace's batch")
	assert.Equal(t, 1, o.pub.calls)
	assert.Error(t, o.d.Paused())

	for range 3 {
		res, err = o.d.RunOnce(context.Background())
		require.NoError(t, err)
		assert.Equal(t, dispatch.Result{}, res)
	}
	assert.Equal(t, 1, o.pub.calls)
	untouched := 0
	for _, e := range o.events(t) {
		assert.Equal(t, model.OutboxPending, e.Status)
		assert.Zero(t, e.AttemptCount)
		if e.LastError == "" {
			untouched++ // never claimed
		}
	}
	assert.Equal(t, 4, untouched, "the other workspaces were not claimed")
}

// The broker answering with a refusal is up: the events' attempts count,
// the breaker stays closed and every workspace is served.
func TestRejectionsCountAttemptsAndKeepTheBreakerClosed(t *testing.T) {
	o := newOutageEnv(t, dispatch.Config{BreakerFailures: 1}, 2)
	o.pub.setFail(func([]ports.Message) error {
		return errors.New("delivery not confirmed for message: nack")
	})
	res, err := o.d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Failed: 6}, res)
	assert.Equal(t, 3, o.pub.calls)
	assert.NoError(t, o.d.Paused())
	for _, e := range o.events(t) {
		assert.Equal(t, 1, e.AttemptCount)
	}
	assert.Empty(t, o.obs.brokerUp)
}

// A publish that outlives its deadline is the broker not answering: an
// outage, not the events' fault.
func TestAPublishTimeoutIsAnOutage(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	id := e.appendEvents(t, ws, 1)[0]
	hanging := publisherFunc(func(ctx context.Context, _ ...ports.Message) error {
		<-ctx.Done()
		return fmt.Errorf("xadd: %w", ctx.Err())
	})
	d := e.dispatcher(t, dispatch.Config{Lease: 30 * time.Millisecond, BreakerFailures: 1, BreakerOpen: time.Hour}, hanging)
	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Postponed: 1}, res)
	assert.Error(t, d.Paused())
	ev := e.event(t, ws, id)
	assert.Equal(t, model.OutboxPending, ev.Status)
	assert.Zero(t, ev.AttemptCount)
}

// A Dispatcher stopped in the middle of a publish hands the events back at
// once, uncounted: left to their lease, the takeover would cost them an
// attempt.
func TestStoppingDuringAPublishCountsNoAttempt(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	ids := e.appendEvents(t, ws, 3)
	publishing := make(chan struct{})
	pub := publisherFunc(func(ctx context.Context, _ ...ports.Message) error {
		close(publishing)
		<-ctx.Done()
		return ctx.Err()
	})
	d := e.dispatcher(t, dispatch.Config{}, pub)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan dispatch.Result)
	go func() {
		res, _ := d.RunOnce(ctx)
		done <- res
	}()
	<-publishing
	stop()
	assert.Equal(t, dispatch.Result{Postponed: 3}, <-done)
	assert.NoError(t, d.Paused(), "stopping says nothing about the broker")
	for _, id := range ids {
		ev := e.event(t, ws, id)
		assert.Equal(t, model.OutboxPending, ev.Status)
		assert.Zero(t, ev.AttemptCount)
		assert.Empty(t, ev.LockedBy)
	}
}

func sum(a, b dispatch.Result) dispatch.Result {
	return dispatch.Result{
		Published: a.Published + b.Published, Failed: a.Failed + b.Failed,
		DeadLettered: a.DeadLettered + b.DeadLettered, Postponed: a.Postponed + b.Postponed,
	}
}

// publisherFunc adapts a function to ports.Publisher.
type publisherFunc func(ctx context.Context, msgs ...ports.Message) error

func (f publisherFunc) Publish(ctx context.Context, msgs ...ports.Message) error {
	return f(ctx, msgs...)
}

// A Dispatcher stopped after the broker accepted a batch still marks it
// dispatched: left under the lease, the batch would be delivered again by
// whichever Dispatcher takes it over.
func TestStoppingAfterAPublishMarksTheBatch(t *testing.T) {
	e := newEnv(t)
	ws := uuid.New()
	ids := e.appendEvents(t, ws, 3)
	ctx, stop := context.WithCancel(context.Background())
	pub := publisherFunc(func(context.Context, ...ports.Message) error {
		stop() // the signal arrives while the broker answers
		return nil
	})
	d := e.dispatcher(t, dispatch.Config{}, pub)
	res, err := d.RunOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Published: 3}, res)
	for _, id := range ids {
		ev := e.event(t, ws, id)
		assert.Equal(t, model.OutboxDispatched, ev.Status)
		assert.Empty(t, ev.LockedBy)
	}
}
