package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/internal/benchdispatch"
)

func benchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the service on this machine",
	}
	cmd.AddCommand(benchDispatchCmd())
	return cmd
}

func benchDispatchCmd() *cobra.Command {
	cfg := benchdispatch.Config{}
	var publishers, instances string
	cmd := &cobra.Command{
		Use:   "dispatch",
		Short: "Measure commit-to-publish throughput and latency of the Dispatcher",
		Long: "For each publisher and each dispatcher count, bootstraps a fresh PostgreSQL database,\n" +
			"starts the Dispatchers against the real broker, commits --events outbox events from\n" +
			"--producers concurrent producers, and measures until the broker accepted every event.\n" +
			"Prints a Markdown table on stdout, progress on stderr. Databases, roles, streams and\n" +
			"queues it creates are removed afterwards.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Publishers, err = benchdispatch.ParsePublishers(publishers); err != nil {
				return err
			}
			if cfg.Instances, err = benchdispatch.ParseInstances(instances); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return benchdispatch.Run(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Events, "events", benchdispatch.DefaultEvents, "events committed per run")
	f.IntVar(&cfg.Workspaces, "workspaces", benchdispatch.DefaultWorkspaces, "workspaces the events are spread over")
	f.StringVar(&publishers, "publishers", benchdispatch.DefaultPublishers, "publishers to measure (memory, redis, amqp, bullmq), comma-separated")
	f.StringVar(&instances, "instances", benchdispatch.DefaultInstances, "dispatcher counts to measure, comma-separated")
	f.IntVar(&cfg.Batch, "batch", benchdispatch.DefaultBatch, "dispatcher batch size")
	f.IntVar(&cfg.Producers, "producers", benchdispatch.DefaultProducers, "concurrent producers")
	f.IntVar(&cfg.EventsPerTx, "events-per-tx", benchdispatch.DefaultEventsPerTx, "events per producer transaction")
	f.DurationVar(&cfg.Timeout, "timeout", benchdispatch.DefaultTimeout, "abort a run if not every event was published by then")
	f.StringVar(&cfg.SuperuserURL, "superuser-url", benchdispatch.DefaultSuperuserURL, "PostgreSQL superuser URL (creates and drops the bench databases and roles)")
	f.StringVar(&cfg.RedisURL, "redis-url", benchdispatch.DefaultRedisURL, "Redis URL")
	f.StringVar(&cfg.AMQPURL, "amqp-url", benchdispatch.DefaultAMQPURL, "RabbitMQ URL")
	return cmd
}
