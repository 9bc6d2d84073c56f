package queuetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/faultproxy"
)

// NewPublisherAt builds, for one test, the publisher under test against
// the broker at addr (host:port; a fault proxy in front of the real one),
// publishing under prefix. It registers its cleanup with t.
type NewPublisherAt func(t *testing.T, addr, prefix string) ports.Publisher

// RunHangingBrokerContract puts a fault proxy in front of the broker at
// brokerAddr and stalls it once the publisher is connected: the broker
// stops answering but keeps the connection open. Every publish must then
// fail by its deadline with an unreachable broker, and leave nothing
// behind: once they all returned, the goroutines are back to what they
// were before (give or take a few) and at most one connection stays open
// through the proxy. When the broker answers again, so does the publisher.
func RunHangingBrokerContract(t *testing.T, brokerAddr string, newPublisher NewPublisherAt) {
	proxy := faultproxy.Start(t, brokerAddr)
	pub := newPublisher(t, proxy.Addr(), Prefix())
	publish(t, pub, newMessage(TypeVerify, 0)) // connected, topology declared
	baseline := stableGoroutines()

	proxy.Stall()
	const publishes, timeout = 20, 150 * time.Millisecond
	for i := range publishes {
		err := publishWithin(t, pub, timeout, newMessage(TypeVerify, i))
		if !domain.IsCode(err, domain.CodeUnavailable) || !errors.Is(err, ports.ErrBrokerUnreachable) {
			t.Fatalf("publish %d to a hanging broker = %v, want %s wrapping %v", i, err, domain.CodeUnavailable, ports.ErrBrokerUnreachable)
		}
	}

	const slack = 4 // a connection being set up again, the proxy's side of it
	deadline := time.Now().Add(10 * time.Second)
	n := runtime.NumGoroutine()
	for n > baseline+slack && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > baseline+slack {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Fatalf("%d goroutines after %d timed-out publishes, %d before: the broker calls were abandoned, not ended\n%s",
			n, publishes, baseline, stacks.String())
	}
	t.Logf("goroutines: %d before, %d after %d timed-out publishes", baseline, n, publishes)
	for proxy.Conns() > 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c := proxy.Conns(); c > 1 {
		t.Fatalf("%d connections open through the proxy after %d timed-out publishes", c, publishes)
	}

	proxy.Resume()
	publish(t, pub, newMessage(TypeVerify, publishes))
}

// stableGoroutines returns the goroutine count once it stopped moving for
// a few samples (or after a few seconds).
func stableGoroutines() int {
	n, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(5 * time.Second); same < 5 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// RunOutageContract runs a Dispatcher, on the memory outbox, against the
// broker at brokerAddr through a fault proxy, and takes the broker away
// for a while (connections cut and refused) with events being written:
// while it is away no attempt is spent (every event keeps attempt_count 0
// and nothing is dead-lettered), the Dispatcher reports the broker down
// once and up once, and when it is back every event is delivered (read
// from the real broker with newSubscriber's subscriber).
func RunOutageContract(t *testing.T, brokerAddr string, newPublisher NewPublisherAt, newSubscriber func(t *testing.T) message.Subscriber) {
	proxy := faultproxy.Start(t, brokerAddr)
	prefix := Prefix()
	pub := &countingPublisher{next: newPublisher(t, proxy.Addr(), prefix)}
	received := subscribe(t, newSubscriber(t), queue.Topic(prefix, TypeVerify))
	env := startDispatcher(t, pub)

	env.write(uuid.New(), 3)
	env.eventually("the first events delivered", env.delivered)

	proxy.Down()
	for range 2 {
		env.write(uuid.New(), 10)
	}
	env.eventually("the broker reported down and probed a few times", func() bool {
		return env.d.Paused() != nil && pub.failures.Load() >= int32(dispatch.DefaultBreakerFailures+3)
	})
	env.noAttemptSpent("during the outage")

	proxy.Up(t)
	env.eventually("every event delivered once the broker is back", env.delivered)
	env.noAttemptSpent("after the outage")
	got := map[string]bool{}
	for len(got) < len(env.events) {
		for _, m := range received.take(t, 1) {
			got[m.UUID] = true // at-least-once: a publish cut short may come twice
		}
	}
	for id := range env.events {
		if !got[id.String()] {
			t.Errorf("event %s not received", id)
		}
	}
	if ups := env.obs.transitions(); fmt.Sprint(ups) != "[false true]" {
		t.Errorf("broker up transitions = %v, want [false true]", ups)
	}
	t.Logf("publishes failed during the outage: %d", pub.failures.Load())
}

// dispatchEnv is a Dispatcher running on the memory outbox with the
// publisher under test, and the events a test wrote.
type dispatchEnv struct {
	t      *testing.T
	uow    ports.UnitOfWork
	clock  ports.Clock
	d      *dispatch.Dispatcher
	obs    *brokerObserver
	events map[uuid.UUID]uuid.UUID // event id -> workspace
}

// startDispatcher runs a Dispatcher that polls often and probes a broker
// it found unavailable every 100ms, until the test ends.
func startDispatcher(t *testing.T, pub ports.Publisher) *dispatchEnv {
	db := memory.NewDB()
	e := &dispatchEnv{t: t, uow: memory.NewUnitOfWork(db), clock: system.NewClock(), obs: &brokerObserver{}, events: map[uuid.UUID]uuid.UUID{}}
	d, err := dispatch.New(dispatch.Config{
		Owner: "contract-test", PollInterval: 20 * time.Millisecond, BreakerOpen: 100 * time.Millisecond,
	}, dispatch.Deps{UnitOfWork: e.uow, Discovery: memory.NewOutboxDiscovery(db), Publisher: pub, Clock: e.clock, Logger: Logger(t), Observer: e.obs})
	if err != nil {
		t.Fatal(err)
	}
	e.d = d
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.Run(ctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	return e
}

// write appends n events of TypeVerify in workspace ws.
func (e *dispatchEnv) write(ws uuid.UUID, n int) {
	e.t.Helper()
	err := e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
		for i := range n {
			ev, err := model.NewOutboxEvent(uuid.Must(uuid.NewV7()), ws, TypeVerify, "test", uuid.New(), map[string]int{"n": i}, e.clock.Now())
			if err != nil {
				return err
			}
			e.events[ev.ID] = ws
			if err := tx.Outbox().Append(ctx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *dispatchEnv) eventually(what string, cond func() bool) {
	e.t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.t.Fatalf("not within %s: %s", wait, what)
		}
	}
}

// all reads every event the test wrote.
func (e *dispatchEnv) all() []model.OutboxEvent {
	var out []model.OutboxEvent
	for id, ws := range e.events {
		err := e.uow.Transact(context.Background(), ws, func(ctx context.Context, tx ports.Tx) error {
			ev, err := tx.Outbox().Get(ctx, id)
			out = append(out, ev)
			return err
		})
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

func (e *dispatchEnv) delivered() bool {
	for _, ev := range e.all() {
		if ev.Status != model.OutboxDispatched {
			return false
		}
	}
	return true
}

// noAttemptSpent fails the test if an event spent an attempt or was
// dead-lettered.
func (e *dispatchEnv) noAttemptSpent(when string) {
	e.t.Helper()
	for _, ev := range e.all() {
		if ev.Status == model.OutboxDeadLetter || ev.AttemptCount != 0 {
			e.t.Fatalf("event %s %s: %s after %d attempts (%s)", ev.ID, when, ev.Status, ev.AttemptCount, ev.LastError)
		}
	}
}

// countingPublisher counts failed publishes.
type countingPublisher struct {
	next     ports.Publisher
	failures atomic.Int32
}

func (p *countingPublisher) Publish(ctx context.Context, msgs ...ports.Message) error {
	err := p.next.Publish(ctx, msgs...)
	if err != nil {
		p.failures.Add(1)
	}
	return err
}

// brokerObserver records the Dispatcher's broker transitions.
type brokerObserver struct {
	dispatch.NopObserver
	mu  sync.Mutex
	ups []bool
}

func (o *brokerObserver) BrokerUp(up bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ups = append(o.ups, up)
}

func (o *brokerObserver) transitions() []bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]bool(nil), o.ups...)
}
