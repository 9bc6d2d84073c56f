package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// ErrNoWorkerOnBullMQ is why `once work` does not run with ONCE_QUEUE=bullmq.
var ErrNoWorkerOnBullMQ = errors.New("ONCE_QUEUE=bullmq: the jobs are consumed by Node.js BullMQ workers, not by `once work` " +
	"(see docs/delivery.md, BullMQ); run `once dispatch` or `once serve` to publish them")

// Bounds of the BullMQ settings: retries the Node.js side can live with,
// and finished jobs kept long enough to deduplicate a republished event
// but never without limit.
const (
	maxBullMQAttempts = 100
	maxBullMQBackoff  = 24 * time.Hour
	minBullMQKeep     = 100
	maxBullMQKeep     = 1_000_000
	maxBullMQKeepAge  = 90 * 24 * time.Hour
)

func (c Config) validateBullMQ() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.BullMQPrefix == "" || strings.ContainsAny(c.BullMQPrefix, " \t\r\n") {
		bad("ONCE_BULLMQ_PREFIX=%q must be a BullMQ key prefix (not empty, no white space)", c.BullMQPrefix)
	}
	if _, err := c.bullmqRoutes(); err != nil {
		bad("ONCE_BULLMQ_QUEUES / ONCE_BULLMQ_PRIORITIES: %v", err)
	}
	if c.BullMQAttempts < 1 || c.BullMQAttempts > maxBullMQAttempts {
		bad("ONCE_BULLMQ_ATTEMPTS must be between 1 and %d", maxBullMQAttempts)
	}
	if c.BullMQBackoff < 0 || c.BullMQBackoff > maxBullMQBackoff {
		bad("ONCE_BULLMQ_BACKOFF must be between 0 and %s", maxBullMQBackoff)
	}
	// A Dispatcher that died between publishing and marking is replaced
	// after its lease; the republished event is deduplicated only while its
	// first job is still kept.
	if c.BullMQKeepCompletedAge < 2*c.DispatchLease || c.BullMQKeepCompletedAge > maxBullMQKeepAge {
		bad("ONCE_BULLMQ_KEEP_COMPLETED_AGE must be between twice ONCE_DISPATCH_LEASE (%s) and %s, so a republished event finds its job",
			2*c.DispatchLease, maxBullMQKeepAge)
	}
	if c.BullMQKeepFailedAge < time.Minute || c.BullMQKeepFailedAge > maxBullMQKeepAge {
		bad("ONCE_BULLMQ_KEEP_FAILED_AGE must be between 1m and %s", maxBullMQKeepAge)
	}
	for _, keep := range []struct {
		name string
		n    int
	}{
		{"ONCE_BULLMQ_KEEP_COMPLETED_COUNT", c.BullMQKeepCompletedCount},
		{"ONCE_BULLMQ_KEEP_FAILED_COUNT", c.BullMQKeepFailedCount},
	} {
		if keep.n < minBullMQKeep || keep.n > maxBullMQKeep {
			bad("%s must be between %d and %d: finished jobs stay in Redis up to that many per queue", keep.name, minBullMQKeep, maxBullMQKeep)
		}
	}
	return errs
}

func (c Config) bullmqRoutes() (bullmq.Routes, error) {
	return bullmq.ParseRoutes(c.BullMQQueues, c.BullMQPriorities)
}

// BullMQConfig is the BullMQ publisher's configuration.
func (c Config) BullMQConfig() (bullmq.Config, error) {
	routes, err := c.bullmqRoutes()
	if err != nil {
		return bullmq.Config{}, err
	}
	return bullmq.Config{
		URL:    c.RedisURL,
		Prefix: c.BullMQPrefix,
		Routes: routes,
		Job: bullmq.JobOptions{
			Attempts:      c.BullMQAttempts,
			Backoff:       c.BullMQBackoff,
			KeepCompleted: bullmq.Retention{Age: c.BullMQKeepCompletedAge, Count: c.BullMQKeepCompletedCount},
			KeepFailed:    bullmq.Retention{Age: c.BullMQKeepFailedAge, Count: c.BullMQKeepFailedCount},
		},
	}, nil
}

// bullmqModule provides the BullMQ publisher. It has no subscriber side:
// Node.js workers consume the jobs.
func bullmqModule(cfg Config) fx.Option {
	return fx.Module("bullmq",
		fx.Provide(func(lc fx.Lifecycle, log *slog.Logger, t Tracing) (ports.Publisher, error) {
			bc, err := cfg.BullMQConfig()
			if err != nil {
				return nil, err
			}
			bc.Tracing = t.clients()
			pub, err := bullmq.New(bc)
			if err != nil {
				return nil, err
			}
			log = log.With("component", "bullmq")
			lc.Append(fx.Hook{
				OnStart: func(ctx context.Context) error { return checkBullMQLayout(ctx, pub, bc, log) },
				OnStop:  func(context.Context) error { return pub.Close() },
			})
			return t.publisher(pub, messaging(cfg)), nil
		}),
	)
}

// bullmqCheckTimeout bounds the start-up check, well inside fx's start
// timeout: an unreachable Redis must not fail the start.
const bullmqCheckTimeout = 5 * time.Second

// checkBullMQLayout refuses to start when a queue once publishes to was set
// up by an unverified BullMQ version, saying so in one line. A Redis that
// does not answer yet only delays the check to the first job (the add
// script checks every job): an outage must not stop the service.
func checkBullMQLayout(ctx context.Context, pub *bullmq.Publisher, bc bullmq.Config, log *slog.Logger) error {
	queues := bc.Routes.QueuesOf(eventTypes...)
	ctx, cancel := context.WithTimeout(ctx, bullmqCheckTimeout)
	defer cancel()
	err := pub.Verify(ctx, queues...)
	var layout *bullmq.LayoutError
	switch {
	case errors.As(err, &layout):
		log.Error(layout.Error())
		return layout
	case err != nil:
		log.Warn("cannot check the BullMQ queues at start-up; every job is checked when it is written",
			"error", domain.SanitizeError(err))
	default:
		log.Info("publishing outbox events as BullMQ jobs for Node.js workers",
			"prefix", bc.Prefix, "queues", strings.Join(queues, ","), "verified_with", "bullmq "+bullmq.VerifiedWith)
	}
	return nil
}

// noWorkerOnBullMQ says, once at start, why `once serve` runs no worker.
var noWorkerOnBullMQ = fx.Invoke(func(log *slog.Logger) {
	log.Info("no in-process worker: with ONCE_QUEUE=bullmq the jobs are consumed by Node.js BullMQ workers",
		"component", "worker")
})
