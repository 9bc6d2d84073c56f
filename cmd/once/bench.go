package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/internal/benchdispatch"
	"github.com/oncehq/once/internal/benchstorm"
)

func benchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the service on this machine",
	}
	cmd.AddCommand(benchDispatchCmd(), benchStormCmd(), benchHTTPCmd())
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

func benchStormCmd() *cobra.Command {
	cfg := benchstorm.Config{}
	var scenarios string
	cmd := &cobra.Command{
		Use:   "storm",
		Short: "Measure retry storms, completed-key replays, a broker outage and a PostgreSQL restart",
		Long: "Starts a private PostgreSQL cluster (initdb into a temporary directory, its own port;\n" +
			"as the postgres OS user when run as root), and runs this binary's serve, dispatch and\n" +
			"work as subprocesses on fresh databases of it, with this environment (so pool and\n" +
			"dispatch settings apply) plus the bench's database, secrets and broker prefix.\n" +
			"storm and replays run --repetitions times, interleaved; outage and restart once.\n" +
			"Prints a Markdown table with a pass/fail column against issue 7's targets on stdout,\n" +
			"progress on stderr. The cluster, databases and Redis keys it makes are removed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Scenarios, err = benchstorm.ParseScenarios(scenarios); err != nil {
				return err
			}
			return runSubprocessBench(cmd, &cfg.Binary, func(ctx context.Context) error {
				_, err := benchstorm.Run(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&scenarios, "scenarios", benchstorm.DefaultScenarios, "scenarios to run (storm, replays, outage, restart), comma-separated")
	f.IntVar(&cfg.Repetitions, "repetitions", benchstorm.DefaultRepetitions, "runs of storm and replays, interleaved")
	f.IntVar(&cfg.StormRequests, "requests", benchstorm.DefaultStormRequests, "identical requests of the storm, sent at once")
	f.IntVar(&cfg.ReplayKeys, "replay-keys", benchstorm.DefaultReplayKeys, "completed keys replayed")
	f.IntVar(&cfg.ReplayConcurrency, "replay-concurrency", benchstorm.DefaultReplayConcurrency, "replays of each key sent at once")
	f.DurationVar(&cfg.Outage, "outage", benchstorm.DefaultOutage, "how long the broker is cut")
	f.IntVar(&cfg.Rate, "rate", benchstorm.DefaultRate, "requests per second of the producers during the outage and the restart")
	f.DurationVar(&cfg.Around, "around", benchstorm.DefaultAround, "how long the producers run before a fault and after it ends")
	f.DurationVar(&cfg.DrainTimeout, "drain-timeout", benchstorm.DefaultDrainTimeout, "how long to wait for the backlog to drain after the load")
	f.DurationVar(&cfg.PostgresDown, "pg-down", benchstorm.DefaultPostgresDown, "how long PostgreSQL stays stopped in the restart")
	f.IntVar(&cfg.MaxConnections, "pg-max-connections", benchstorm.DefaultMaxConnections, "max_connections of the private cluster")
	f.StringVar(&cfg.PostgresBin, "pg-bin", "", "directory of initdb and pg_ctl (default: the PATH, else the newest /usr/lib/postgresql/*/bin)")
	f.StringVar(&cfg.RedisURL, "redis-url", benchstorm.DefaultRedisURL, "Redis of the outage and restart (the bench uses a key prefix of its own)")
	f.StringVar(&cfg.PoolSetting, "pool-setting", benchstorm.DefaultPoolSetting, "environment variable that bounds a process's database pool, read through app.Config")
	f.StringVar(&cfg.Binary, "binary", "", "the once binary to run (default: this one)")
	return cmd
}

func benchHTTPCmd() *cobra.Command {
	cfg := benchstorm.HTTPConfig{}
	var conns string
	cmd := &cobra.Command{
		Use:   "http",
		Short: "Measure the write path over HTTP beside pgbench running the same statements",
		Long: "Starts a private PostgreSQL cluster and, for each repetition, a fresh database and this\n" +
			"binary's serve on it. At each connection count it runs, one after another: plain draft\n" +
			"creates, idempotent creates with fresh keys, completed-key replays, and pgbench running\n" +
			"the plain create's statements as the application role. Prints requests/s, the service's\n" +
			"CPU per request and the ratios (median of the repetitions, least–most) as a Markdown\n" +
			"table on stdout, progress on stderr. The cluster and its databases are removed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Conns, err = benchstorm.ParseConns(conns); err != nil {
				return err
			}
			return runSubprocessBench(cmd, &cfg.Binary, func(ctx context.Context) error {
				return benchstorm.RunHTTP(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Repetitions, "repetitions", benchstorm.DefaultHTTPRepetitions, "repetitions, interleaved, each on a fresh database")
	f.StringVar(&conns, "conns", benchstorm.DefaultHTTPConns, "connection counts (and pgbench clients), comma-separated")
	f.DurationVar(&cfg.Duration, "duration", benchstorm.DefaultHTTPDuration, "how long each variant runs at each connection count")
	f.DurationVar(&cfg.Warmup, "warmup", benchstorm.DefaultHTTPWarmup, "uncounted warm-up before each variant")
	f.IntVar(&cfg.MaxConnections, "pg-max-connections", benchstorm.DefaultMaxConnections, "max_connections of the private cluster")
	f.StringVar(&cfg.SynchronousCommit, "pg-synchronous-commit", benchstorm.DefaultSynchronousCommit, "synchronous_commit of the private cluster (off: commits do not wait for a shared disk)")
	f.StringVar(&cfg.PostgresBin, "pg-bin", "", "directory of initdb, pg_ctl and pgbench (default: the PATH, else the newest /usr/lib/postgresql/*/bin)")
	f.StringVar(&cfg.Binary, "binary", "", "the once binary to run (default: this one)")
	return cmd
}

// runSubprocessBench runs a bench whose processes are this binary (or
// --binary), until it ends or the bench is interrupted.
func runSubprocessBench(cmd *cobra.Command, binary *string, run func(ctx context.Context) error) error {
	if *binary == "" {
		var err error
		if *binary, err = os.Executable(); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx)
}
