package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/prometheus"
	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/tracing"
	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/ports"
)

// DispatchModule runs the Dispatcher (the outbox's retention is a
// maintenance service).
var DispatchModule = fx.Module("dispatch",
	fx.Provide(newDispatcher),
	fx.Invoke(func(lc fx.Lifecycle, d *dispatch.Dispatcher) {
		runInBackground(lc, d.Run)
	}),
)

// WorkerModule consumes the queue: one handler per task kind, as the kinds
// listed them (withKindsCode). The external systems the handlers call
// come from externalSystemsModule.
func WorkerModule() fx.Option {
	return workerModule(withKindsCode(kindHandlers))
}

// workerModule consumes the queue with the Handlers that handlers
// provide, the webhook delivery among them.
func workerModule(handlers ...fx.Option) fx.Option {
	return fx.Module("worker",
		// Every line of the workers and their handlers names its component.
		fx.Decorate(func(log *slog.Logger) *slog.Logger { return log.With("component", "worker") }),
		// The jobs' transactions, and the worker's records of jobs parked or
		// given up on, take turns between workspaces at the database, half
		// of the pool at once: the rest is the API's, the Dispatcher's and
		// the relay's when they share the process (`once serve`).
		fx.Decorate(func(uow ports.UnitOfWork, db DatabaseConfig) ports.UnitOfWork {
			return queue.FairTransactions(uow, db.DBMaxConns/2)
		}),
		fx.Options(handlers...),
		webhookDelivery,
		fx.Provide(newDestinationGate, newWorker,
			fx.Annotate(destinationRoutes, fx.ResultTags(`group:"ops_routes,flatten"`))),
		fx.Invoke(func(m *prometheus.Metrics, w *queue.Worker, gate *destinations.Gate, clock ports.Clock) {
			m.WatchDestinations(gate.Snapshot, clock.Now)
			m.WatchSlots(w.Slots)
		}),
		fx.Invoke(func(lc fx.Lifecycle, w *queue.Worker, cfg QueueConfig, log *slog.Logger) {
			lc.Append(fx.Hook{
				OnStart: func(context.Context) error { return w.Run(context.Background()) },
				OnStop:  func(ctx context.Context) error { return stopWorker(ctx, w, cfg.Queue, log) },
			})
		}),
	)
}

// stopWorker stops the workers within ctx (ONCE_SHUTDOWN_TIMEOUT): no job
// starts any more, the running ones get until shortly before ctx ends to
// finish, then the rest are interrupted and handed back to the broker
// unacknowledged. Redis Streams keeps such a message pending and another
// worker claims it after ONCE_REDIS_CLAIM_IDLE; RabbitMQ requeues it at
// once; the in-process queue (ONCE_QUEUE=memory) loses it with the process,
// as it loses everything. A handed-back job runs again from the start
// (every job is idempotent, so running it twice is safe). kind is
// ONCE_QUEUE, for the log.
func stopWorker(ctx context.Context, w *queue.Worker, kind string, log *slog.Logger) error {
	log = log.With("component", "shutdown")
	log.Info("workers draining: no new job starts", slog.Int("running", w.Running()))
	drainCtx, cancel := context.WithCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		// Keep a little of the timeout for interrupting what is left.
		reserve := min(time.Until(deadline)/5, 2*time.Second)
		drainCtx, cancel = context.WithDeadline(ctx, deadline.Add(-reserve))
	}
	drainErr := w.Drain(drainCtx)
	cancel()
	if drainErr != nil {
		log.Warn("workers: jobs still running at the shutdown timeout are interrupted and handed back", slog.Int("running", w.Running()))
	}
	err := w.Close()
	log.Info("workers stopped", slog.Int("handed_back", w.HandedBack()), slog.String("queue", kind))
	return err
}

// dispatcherIn are the Dispatcher's dependencies; Claims only with
// PostgreSQL (the memory store claims through the unit of work).
type dispatcherIn struct {
	fx.In
	UnitOfWork ports.UnitOfWork
	Claims     ports.OutboxClaims `optional:"true"`
	Discovery  ports.OutboxDiscovery
	Publisher  ports.Publisher
	Signal     ports.DispatchSignal
	Clock      ports.Clock
	Log        *slog.Logger
	Metrics    *prometheus.Metrics
}

func newDispatcher(cfg DispatchConfig, process ProcessConfig, in dispatcherIn) (*dispatch.Dispatcher, error) {
	in.Metrics.DispatcherRunning()
	c := cfg.dispatcher()
	c.Owner = process.Owner()
	return dispatch.New(c, dispatch.Deps{
		UnitOfWork: in.UnitOfWork, Claims: in.Claims, Discovery: in.Discovery, Publisher: in.Publisher, Signal: in.Signal,
		// The Dispatcher names its component itself.
		Clock: in.Clock, Logger: in.Log, Observer: in.Metrics,
	})
}

// workerIn are the workers' dependencies besides their configuration.
type workerIn struct {
	fx.In
	Broker     *Broker
	Handlers   Handlers
	UnitOfWork ports.UnitOfWork
	Clock      ports.Clock
	Gate       *destinations.Gate
	Tracing    Tracing
	Messaging  tracing.Messaging
	Metrics    *prometheus.Metrics
	Log        *slog.Logger
}

func newWorker(cfg WorkerConfig, brokers QueueConfig, in workerIn) (*queue.Worker, error) {
	sub, err := in.Broker.NewSubscriber()
	if err != nil {
		return nil, err
	}
	// Its own records go through the worker's turns at the database too.
	failures := newJobFailures(in.UnitOfWork, in.Clock, in.Log)
	return queue.NewWorker(sub, failures, failures, in.Tracing.handlers(in.Handlers, in.Messaging),
		queue.WorkerConfig{
			Namespace: brokers.QueuePrefix, Concurrency: cfg.WorkConcurrency, Destinations: workerGate{gate: in.Gate},
			MaxRetries: cfg.WorkerMaxRetries, Deadlines: retryDeadlines(), DefaultDeadline: cfg.WorkDeadline,
			OutageWait: cfg.WorkOutageWait, Observer: in.Metrics,
		}, in.Log)
}

// deadLetters adapts the dispatch admin use case to the HTTP port.
type deadLetters struct{ admin *dispatch.Admin }

func (d deadLetters) Redrive(ctx context.Context, ws uuid.UUID, ids []uuid.UUID) (int, error) {
	return d.admin.Redrive(ctx, ws, ids)
}

// runInBackground runs fn from start to stop without blocking the hooks.
func runInBackground(lc fx.Lifecycle, fn func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(ctx)
			}()
			return nil
		},
		OnStop: func(stop context.Context) error {
			cancel()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
				return nil
			case <-stop.Done():
				return stop.Err()
			}
		},
	})
}
