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

// runBackground runs a Dispatcher (dispatcher) or a worker process of its
// own, named what in errors, on a broker of queues, its ops listener at
// opsAddr.
func runBackground(cfg app.Config, what, queues string, dispatcher bool, opsAddr string) error {
	if err := standalone(cfg, what, queues); err != nil {
		return err
	}
	cfg.Dispatcher, cfg.Worker = dispatcher, !dispatcher
	cfg = cfg.WithOpsAddr(opsAddr)
	return runApp(cfg, app.Base(cfg, app.DefaultLogger(cfg.LoggingConfig)), app.Ops(cfg.OpsConfig), app.Background(cfg))
}

func dispatchCmd() *cobra.Command {
	return processCmd("dispatch", "Run a Dispatcher: deliver committed outbox events to the queue",
		"Runs the Dispatcher and the outbox and idempotency cleanups, without the API.\n"+
			"Any number may run at once; they share the work through leases.", app.LoadBackgroundConfig,
		func(cfg app.Config) error {
			return runBackground(cfg, "once dispatch", "redis, amqp or bullmq", true, app.OpsAddrDispatch)
		})
}

func workCmd() *cobra.Command {
	return processCmd("work", "Run workers: consume the queue, one handler per event type",
		"With ONCE_QUEUE=bullmq, Node.js workers consume the task jobs: `once work`\n"+
			"consumes once's own jobs only (webhook deliveries), from Redis Streams.", app.LoadBackgroundConfig,
		func(cfg app.Config) error {
			return runBackground(cfg, "once work", "redis, amqp or bullmq", false, app.OpsAddrWork)
		})
}
