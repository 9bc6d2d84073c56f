package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/fx"
)

// Shutdown is how a process stops without failing a request behind a load
// balancer (docs/deploy.md, rolling restarts). On SIGTERM the command
// calls Drain: /readyz answers 503 at once so the balancer's health check
// takes the instance out, while the API goes on serving for
// ONCE_SHUTDOWN_DRAIN with `Connection: close` on every response, so that
// clients and the balancer open their next connection to another instance.
// Then the application stops within ONCE_SHUTDOWN_TIMEOUT: the API server
// first (it stops accepting and finishes the requests in flight), then the
// workers and the Dispatcher. Every step is logged (component
// "shutdown").
type Shutdown struct {
	drain    time.Duration
	log      *slog.Logger
	draining atomic.Bool
	inFlight atomic.Int64
	// serving says that an API server registered: only then is there
	// anything to drain (dispatch and work answer 503 at once and stop).
	serving atomic.Bool
}

// ShutdownModule provides the Shutdown every process shares.
var ShutdownModule = fx.Module("shutdown",
	fx.Provide(func(c ShutdownConfig, log *slog.Logger) *Shutdown {
		return &Shutdown{drain: c.ShutdownDrain, log: log.With("component", "shutdown")}
	}),
)

// Draining reports whether Drain was called: /readyz answers 503.
func (s *Shutdown) Draining() bool { return s.draining.Load() }

// Drain marks the process as stopping and, in a process that serves the
// API, keeps serving for the drain period (cut short by ctx), long enough
// for the balancer's health check to see /readyz fail.
func (s *Shutdown) Drain(ctx context.Context, signal string) {
	s.draining.Store(true)
	if !s.serving.Load() || s.drain <= 0 {
		s.log.Info("stopping: /readyz answers 503", slog.String("signal", signal))
		return
	}
	s.log.Info("draining: /readyz answers 503, the API serves with Connection: close until the drain ends",
		slog.String("signal", signal), slog.Duration("drain", s.drain), slog.Int64("in_flight", s.inFlight.Load()))
	timer := time.NewTimer(s.drain)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// Stopping logs the end of the drain, before the application stops.
func (s *Shutdown) Stopping(timeout time.Duration) {
	s.log.Info("stopping: no new connections; requests in flight and jobs finish within the shutdown timeout",
		slog.Duration("timeout", timeout), slog.Int64("in_flight", s.inFlight.Load()))
}

// Stopped logs how the stop ended.
func (s *Shutdown) Stopped(err error) {
	if err != nil {
		s.log.Error("stopped before everything finished", slog.String("error", err.Error()))
		return
	}
	s.log.Info("stopped")
}

// api wraps the API handler: it counts the requests in flight (for the
// logs) and, while draining, answers each with Connection: close (net/http
// then closes the connection after the response), so no client keeps a
// connection to an instance about to go.
func (s *Shutdown) api(next http.Handler) http.Handler {
	s.serving.Store(true)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// shutdownServer stops srv: no new connections, idle ones closed, the
// requests in flight finished within ctx; past it, the connections still
// open are closed (their clients get no answer) and that is logged.
func (s *Shutdown) shutdownServer(ctx context.Context, srv *http.Server, what string) error {
	n := s.inFlight.Load()
	if err := srv.Shutdown(ctx); err != nil {
		s.log.Error(what+": requests still in flight at the shutdown timeout were cut off",
			slog.Int64("in_flight", s.inFlight.Load()))
		_ = srv.Close()
		return err
	}
	s.log.Info(what+" stopped: every request in flight answered", slog.Int64("in_flight_at_stop", n))
	return nil
}
