package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// brokerBreaker is the Dispatcher's circuit breaker in front of the broker
// (sony/gobreaker: small, dependency-free, the usual closed / open /
// half-open machine with a state-change hook).
//
// Only failures that say nothing about the events count against the
// broker (brokersFault): ports.ErrBrokerUnreachable (refused, reset, not
// connected, timed out, ...), ports.ErrBrokerMisconfigured (the broker
// answered, but is set up otherwise than once was told: a cluster node
// reached as a single one, a queue declared with other arguments, refused
// credentials) and a publish that outlived its deadline (unless its wait
// for its turn had shortened it: errWindowRanOut). A publish the
// broker answered with a refusal of the events shows it is up. After
// Config.BreakerFailures such failures in a row the breaker opens: the
// Dispatcher stops claiming and publishing for Config.BreakerOpen, then one
// publish probes (half-open); if it gets through, publishing resumes at
// once. Transitions are logged and observed once each, not per event.
type brokerBreaker struct {
	cb       *gobreaker.CircuitBreaker[struct{}]
	log      *slog.Logger
	observer Observer
	clock    ports.Clock
	probe    time.Duration

	up atomic.Bool

	mu sync.Mutex // guards the fields below (read by Paused, from /readyz)
	// lastFailure is the last failure that counted against the broker,
	// sanitized; misconfigured says it was ports.ErrBrokerMisconfigured.
	lastFailure   string
	misconfigured bool
	downSince     time.Time
}

func newBrokerBreaker(cfg Config, log *slog.Logger, observer Observer, clock ports.Clock) *brokerBreaker {
	b := &brokerBreaker{log: log, observer: observer, clock: clock, probe: cfg.BreakerOpen}
	b.up.Store(true)
	b.cb = gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "broker",
		MaxRequests: 1, // one probe at a time while half-open
		Timeout:     cfg.BreakerOpen,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= uint32(cfg.BreakerFailures)
		},
		IsSuccessful: func(err error) bool {
			if brokersFault(err) {
				b.mu.Lock()
				// The reason, without the code every publish error has.
				b.lastFailure = strings.TrimPrefix(domain.SanitizeError(err), string(domain.ErrorCode(err))+": ")
				b.misconfigured = errors.Is(err, ports.ErrBrokerMisconfigured)
				b.mu.Unlock()
				return false
			}
			return true // published, or refused by a broker that answered
		},
		// Shutting down says nothing about the broker, nor does a publish
		// that ran out of the window its wait for its turn left.
		IsExcluded: func(err error) bool {
			return errors.Is(err, context.Canceled) || errors.Is(err, errWindowRanOut)
		},
		OnStateChange: b.changed,
	})
	return b
}

// brokersFault tells a failure of the broker from a failure of the events:
// the publisher said so (ports.BrokersFault), or the publish outlived its
// deadline (the broker did not answer in time).
func brokersFault(err error) bool {
	return ports.BrokersFault(err) || errors.Is(err, context.DeadlineExceeded)
}

// refused tells whether err is the breaker declining a publish.
func refused(err error) bool {
	return errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests)
}

// publish runs fn through the breaker. An error is fn's, or the breaker's
// refusal to run it (see refused).
func (b *brokerBreaker) publish(fn func() error) error {
	_, err := b.cb.Execute(func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// open reports whether publishing is stopped right now: the breaker is
// open and its wait has not run out. Half-open is not open: the next
// publish is the probe.
func (b *brokerBreaker) open() bool { return b.cb.State() == gobreaker.StateOpen }

// closed reports whether publishing goes on as usual. After a failed
// publish, a breaker that is not closed (open, or probing again already)
// means: leave the broker alone for the rest of the round.
func (b *brokerBreaker) closed() bool { return b.cb.State() == gobreaker.StateClosed }

// paused says why publishing is paused, or nil while it goes on.
func (b *brokerBreaker) paused() error {
	if b.up.Load() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	what := "unreachable"
	if b.misconfigured {
		what = "misconfigured"
	}
	return domain.Errorf(domain.CodeUnavailable, "publishing paused for %s, the broker is %s: %s",
		b.clock.Now().Sub(b.downSince).Round(time.Second), what, b.lastFailure)
}

// changed logs and observes the transitions that matter to operators:
// down (closed to open) and back up (half-open to closed). A failed probe
// (half-open to open) is only debug: the broker was already reported down.
// A misconfigured broker is an error, not a warning: it does not come back
// by itself.
func (b *brokerBreaker) changed(_ string, from, to gobreaker.State) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case from == gobreaker.StateClosed && to == gobreaker.StateOpen:
		b.downSince = b.clock.Now()
		b.up.Store(false)
		if b.misconfigured {
			b.log.Error("broker misconfigured: publishing paused until it is fixed, events wait without spending attempts",
				"probe_every", b.probe.String(), "error", b.lastFailure)
		} else {
			b.log.Warn("broker unreachable: publishing paused, events wait without spending attempts",
				"probe_every", b.probe.String(), "error", b.lastFailure)
		}
		b.observer.BrokerUp(false)
	case to == gobreaker.StateClosed:
		b.up.Store(true)
		b.log.Info("broker reachable again: publishing resumed", "down_for", b.clock.Now().Sub(b.downSince).String())
		b.observer.BrokerUp(true)
	case to == gobreaker.StateHalfOpen:
		b.log.Debug("probing the broker")
	default:
		b.log.Debug("broker still unavailable", "error", b.lastFailure)
	}
}
