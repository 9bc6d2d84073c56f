package app

import (
	"log/slog"
	"os"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
)

// Storage modules by configuration: a plain switch, so the choice is
// readable in one place.
func storageModule(cfg Config) fx.Option {
	switch {
	case cfg.Embedded():
		return MemoryModule
	default:
		return PostgresModule
	}
}

// Base is everything but the servers: configuration, logging, storage and
// the use cases. Commands that only need the use cases (once workspace) use
// it alone.
func Base(cfg Config, log *slog.Logger) fx.Option {
	return fx.Options(
		supplyGroups(cfg),
		fx.Supply(log),
		fx.WithLogger(func() fxevent.Logger {
			if cfg.LogLevel == "debug" {
				return &fxevent.SlogLogger{Logger: log.With("component", "fx")}
			}
			return fxevent.NopLogger
		}),
		CoreModule,
		ShutdownModule,
		ConsoleModule,
		tracingModule,
		TasksModule(),
		storageModule(cfg),
		OpsRoutesModule,
		fx.Invoke(routeLibraryLogs),
	)
}

// Serve is the whole service: the API and, as configured, the background
// parts. The API comes last: it starts once everything behind it runs, and
// (fx stops in reverse) stops first, so its requests in flight finish
// before the workers and the Dispatcher stop.
func Serve(cfg Config, log *slog.Logger) fx.Option {
	opts := []fx.Option{Base(cfg, log), Ops(cfg.OpsConfig), Background(cfg), HTTPModule}
	if cfg.Embedded() && cfg.Demo {
		opts = append(opts, DemoModule)
	}
	return fx.Options(opts...)
}

// Background is what runs besides the API: the cleanups, the start-up
// check of the database's replication and, as configured, the Dispatcher
// and the workers with the queue they need.
func Background(cfg Config) fx.Option {
	opts := []fx.Option{maintenance(cfg.ProcessConfig, cfg.Queue, cfg.Worker)}
	if !cfg.Embedded() {
		opts = append(opts, replicationCheck)
	}
	if cfg.Dispatcher || cfg.Worker || cfg.RelayEnabled() {
		opts = append(opts, queueModule(cfg.Queue))
	}
	opts = append(opts, relayModule(cfg.RelayEnabled()))
	if cfg.Dispatcher {
		opts = append(opts, DispatchModule)
	}
	switch {
	// Node.js workers consume BullMQ's jobs: ours consumes once's own.
	case cfg.Worker && cfg.Queue == QueueBullMQ:
		opts = append(opts, ownJobsWorkerModule())
	case cfg.Worker:
		opts = append(opts, WorkerModule(), externalSystemsModule(cfg.SimURL))
	}
	return fx.Options(opts...)
}

// DefaultLogger is the logger for cfg on standard error.
func DefaultLogger(cfg LoggingConfig) *slog.Logger { return NewLogger(cfg, os.Stderr) }
