package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/oncehq/once/app"
)

// processCmd is the command of a long-lived process (serve, dispatch,
// work): it loads the configuration with load (app.LoadConfig, or
// app.LoadBackgroundConfig for a process that verifies no token) and runs
// run with it.
func processCmd(use, short, long string, load func() (app.Config, error), run func(cfg app.Config) error) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Long: long, Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			return run(cfg)
		},
	}
}

// runApp runs a long-lived process (serve, dispatch, work) until SIGINT or
// SIGTERM. The broker is checked first, when the process needs one; a
// failure to build or start the application is returned as startupError.
// On the signal the process drains (app.Shutdown: /readyz 503, the API
// still serving for ONCE_SHUTDOWN_DRAIN), then stops within
// ONCE_SHUTDOWN_TIMEOUT. A second signal during the drain ends it early.
func runApp(cfg app.Config, opts ...fx.Option) error {
	if err := app.CheckBroker(context.Background(), cfg.ProcessConfig, cfg.QueueConfig); err != nil {
		return startupError(err)
	}
	var sd *app.Shutdown
	a := fx.New(append(opts, fx.StartTimeout(cfg.StartTimeout), fx.StopTimeout(cfg.ShutdownTimeout), fx.Populate(&sd))...)
	ctx, cancel := context.WithTimeout(context.Background(), a.StartTimeout())
	defer cancel()
	if err := a.Start(ctx); err != nil { // also reports what fx.New failed to build
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("not started within ONCE_START_TIMEOUT=%s: %w", a.StartTimeout(), err)
		}
		return startupError(err)
	}
	sig := <-a.Wait()
	drainCtx, stopDrain := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	sd.Drain(drainCtx, sig.Signal.String())
	stopDrain()
	sd.Stopping(a.StopTimeout())
	stopCtx, stopCancel := context.WithTimeout(context.Background(), a.StopTimeout())
	defer stopCancel()
	err := a.Stop(stopCtx)
	sd.Stopped(err)
	return err
}

// startApp starts an application for a one-shot command (workspace create,
// outbox redrive); the caller calls stop when done.
func startApp(ctx context.Context, opts ...fx.Option) (stop func(), err error) {
	a := fx.New(opts...)
	if err := a.Start(ctx); err != nil {
		return nil, startupError(err)
	}
	return func() { _ = a.Stop(context.Background()) }, nil
}

// withUseCase starts the storage and use cases without the servers and
// hands fn the use case T; check, if not nil, may refuse the
// configuration first.
func withUseCase[T any](ctx context.Context, check func(app.Config) error, fn func(T) error) error {
	cfg, err := app.LoadConfig()
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(cfg); err != nil {
			return err
		}
	}
	var useCase T
	stop, err := startApp(ctx, app.Base(cfg, app.DefaultLogger(cfg.LoggingConfig)), fx.Populate(&useCase))
	if err != nil {
		return err
	}
	defer stop()
	return fn(useCase)
}

// parseID reads the uuid value of flag (its name in the error).
func parseID(flag, value string) (uuid.UUID, error) {
	id, err := uuid.Parse(value)
	if err != nil {
		return uuid.Nil, fmt.Errorf("--%s: %w", flag, err)
	}
	return id, nil
}

// startupError is what an operator reads when a process cannot start: the
// root cause on one line (an address in use, a database or a broker that
// cannot be reached, each naming its address and never a password), not
// fx's chain of the constructors that needed it.
func startupError(err error) error {
	return errors.New("cannot start: " + strings.Join(strings.Fields(dig.RootCause(err).Error()), " "))
}
