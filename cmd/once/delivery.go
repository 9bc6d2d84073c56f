package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/app"
)

// standalone checks that a dispatcher or worker process can reach the others:
// the embedded store and the in-process queue live and die with one process.
func standalone(cfg app.Config, what, queues string) error {
	if cfg.Embedded() {
		return errors.New(what + " needs DATABASE_URL: the embedded store lives inside `once serve`")
	}
	if cfg.Queue == app.QueueMemory {
		return errors.New(what + " needs ONCE_QUEUE=" + queues + ": the memory queue lives inside `once serve`")
	}
	return nil
}

func dispatchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "dispatch",
		Short: "Run a Dispatcher: deliver committed outbox events to the queue",
		Long: "Runs the Dispatcher and the outbox and idempotency cleanups, without the API.\n" +
			"Any number may run at once; they share the work through leases.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			if err := standalone(cfg, "once dispatch", "redis, amqp or bullmq"); err != nil {
				return err
			}
			cfg.Dispatcher, cfg.Worker = true, false
			cfg = cfg.WithOpsAddr(app.OpsAddrDispatch)
			return runApp(cfg, app.Base(cfg, app.DefaultLogger(cfg)), app.Ops(cfg), app.Background(cfg))
		},
	}
}

func workCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "work",
		Short: "Run workers: consume the queue, one handler per event type",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := app.LoadConfig()
			if err != nil {
				return err
			}
			if cfg.Queue == app.QueueBullMQ {
				return app.ErrNoWorkerOnBullMQ
			}
			if err := standalone(cfg, "once work", "redis or amqp"); err != nil {
				return err
			}
			cfg.Dispatcher, cfg.Worker = false, true
			cfg = cfg.WithOpsAddr(app.OpsAddrWork)
			return runApp(cfg, app.Base(cfg, app.DefaultLogger(cfg)), app.Ops(cfg), app.Background(cfg))
		},
	}
}
