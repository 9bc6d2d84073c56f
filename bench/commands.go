package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/oncehq/once/bench/delivery"
	"github.com/oncehq/once/bench/retention"
	"github.com/oncehq/once/bench/storm"
	"github.com/oncehq/once/bench/work"
)

// commonFlags are the flags drain and steady share.
func commonFlags(cmd *cobra.Command, c *delivery.Common, dispatchers *string) {
	f := cmd.Flags()
	f.StringVar(&c.DatabaseURL, "database-url", delivery.DefaultDatabaseURL, "PostgreSQL superuser URL (creates and drops the bench databases and roles)")
	f.StringVar(&c.RedisURL, "redis-url", delivery.DefaultRedisURL, "Redis URL")
	f.StringVar(&c.AMQPURL, "amqp-url", delivery.DefaultAMQPURL, "RabbitMQ URL")
	f.IntVar(&c.Workspaces, "workspaces", delivery.DefaultWorkspaces, "workspaces the events are spread over")
	f.StringVar(dispatchers, "dispatchers", delivery.DefaultDispatchers, "Dispatcher process counts, comma-separated")
	f.IntVar(&c.Reps, "reps", delivery.DefaultReps, "repetitions, interleaved")
	f.IntVar(&c.Batch, "batch", delivery.DefaultBatch, "Dispatcher batch (and raw claim size)")
	f.IntVar(&c.Concurrency, "concurrency", 0, "Dispatcher batches in flight (0: the default)")
	f.BoolVar(&c.JSON, "json", false, "print one JSON object per measurement instead of the table")
	f.DurationVar(&c.Timeout, "timeout", delivery.DefaultTimeout, "abort a measurement that takes longer")
	f.StringVar(&c.ProfileDir, "profile-dir", "", "write a CPU profile (pprof) of every Dispatcher process into this directory")
}

func benchDrainCmd() *cobra.Command {
	cfg := delivery.DrainConfig{}
	var dispatchers, queues, clients string
	cmd := &cobra.Command{
		Use:   "drain",
		Short: "Drain a preloaded backlog with K Dispatcher processes, beside the raw claim+mark limit",
		Long: "Per repetition and variant: a fresh PostgreSQL database with --events pending events over\n" +
			"--workspaces workspaces (about 80-byte payloads), drained either by K Dispatchers (each a\n" +
			"process of this binary) to a real broker, or by the Dispatcher's claim and mark statements\n" +
			"issued straight from Go by --clients clients (no publish). Prints events/s, the ratios to\n" +
			"the raw one-client limit of the same repetition and to Redis, and the peak RSS of a\n" +
			"Dispatcher process; median (min–max) of --reps interleaved repetitions. Progress on stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Queues, err = delivery.ParseQueues(queues); err != nil {
				return err
			}
			if clients != "" { // "": no raw measurement
				if cfg.Clients, err = delivery.ParseCounts("clients", clients); err != nil {
					return err
				}
			}
			return runDeliveryBench(cmd, &cfg.Common, dispatchers, func(ctx context.Context) error {
				return delivery.RunDrain(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	commonFlags(cmd, &cfg.Common, &dispatchers)
	f := cmd.Flags()
	f.IntVar(&cfg.Events, "events", delivery.DefaultEvents, "events preloaded per measurement")
	f.StringVar(&queues, "queues", delivery.DefaultQueues, "queues to measure (redis, amqp, bullmq, memory), comma-separated")
	f.StringVar(&clients, "clients", delivery.DefaultClients, "raw claim+mark client counts, comma-separated (empty: none)")
	return cmd
}

func benchSteadyCmd() *cobra.Command {
	cfg := delivery.SteadyConfig{}
	var dispatchers string
	cmd := &cobra.Command{
		Use:   "steady",
		Short: "Commit→publish latency at a steady rate, producers in a process of their own",
		Long: "Per repetition and Dispatcher count: a fresh PostgreSQL database, K Dispatcher processes\n" +
			"publishing to Redis Streams, and a producer process (this binary) committing one event per\n" +
			"transaction at --rate events/s for --duration, recording each commit time. A consumer in the\n" +
			"bench reads the stream and records when each event appears: latency is that minus the\n" +
			"commit time. Prints p50/p99/max; median (min–max) of --reps interleaved repetitions.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDeliveryBench(cmd, &cfg.Common, dispatchers, func(ctx context.Context) error {
				return delivery.RunSteady(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	commonFlags(cmd, &cfg.Common, &dispatchers)
	f := cmd.Flags()
	f.IntVar(&cfg.Rate, "rate", delivery.DefaultRate, "events committed per second")
	f.DurationVar(&cfg.Duration, "duration", delivery.DefaultDuration, "how long the producer commits per measurement")
	f.IntVar(&cfg.ProducerConns, "producer-conns", delivery.DefaultProducerConns, "connections the producer commits from")
	f.StringSliceVar(&cfg.Paths, "paths", strings.Split(delivery.DefaultPaths, ","),
		"how events reach the stream, comma-separated: dispatcher (the Dispatchers alone), relay (the producer publishes its own, the Dispatchers make up)")
	return cmd
}

func benchFairnessCmd() *cobra.Command {
	cfg := delivery.FairnessConfig{}
	var dispatchers string
	cmd := &cobra.Command{
		Use:   "fairness",
		Short: "The quiet workspaces' commit→publish latency with a large backlog in one workspace, beside the same run without it",
		Long: "Per repetition and Dispatcher count, twice (interleaved): a fresh PostgreSQL database in which the first of\n" +
			"--workspaces workspaces holds --backlog pending events (preloaded) or none, K Dispatcher processes publishing\n" +
			"to Redis Streams, and a producer process (this binary) committing one event per transaction into the other\n" +
			"workspaces at --rate events/s for --duration. A consumer in the bench records when each of those quiet events\n" +
			"appears. Prints the quiet workspaces' p50/p99 without and with the backlog, and the ratio of the p99s of the\n" +
			"same repetition (the target: at most 2×); median (min–max) of --reps repetitions.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDeliveryBench(cmd, &cfg.Common, dispatchers, func(ctx context.Context) error {
				return delivery.RunFairness(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	commonFlags(cmd, &cfg.Common, &dispatchers)
	// One Dispatcher, as `once serve` runs it, unless asked.
	dispatchersFlag := cmd.Flags().Lookup("dispatchers")
	dispatchersFlag.DefValue = delivery.DefaultFairnessDispatchers
	dispatchers = delivery.DefaultFairnessDispatchers
	f := cmd.Flags()
	f.IntVar(&cfg.Backlog, "backlog", delivery.DefaultBacklog, "pending events in the noisy workspace when the quiet ones start")
	f.IntVar(&cfg.Rate, "rate", delivery.DefaultFairnessRate, "events per second the quiet workspaces commit, together")
	f.DurationVar(&cfg.Duration, "duration", delivery.DefaultDuration, "how long the quiet workspaces commit per measurement")
	f.IntVar(&cfg.ProducerConns, "producer-conns", delivery.DefaultProducerConns, "connections the producer commits from")
	f.StringSliceVar(&cfg.Paths, "paths", strings.Split(delivery.DefaultPaths, ","),
		"how events reach the stream, comma-separated: dispatcher (the Dispatchers alone), relay (the producer publishes its own, the Dispatchers make up)")
	return cmd
}

// benchDispatcherChildCmd is a Dispatcher process of drain, steady and
// fairness.
func benchDispatcherChildCmd() *cobra.Command {
	cfg := delivery.ChildConfig{}
	cmd := &cobra.Command{
		Use:    "dispatcher-child",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return delivery.RunDispatcherChild(cmd.Context(), cfg, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.AppDSN, "app-dsn", "", "")
	f.StringVar(&cfg.Queue, "queue", "", "")
	f.StringVar(&cfg.Prefix, "prefix", "", "")
	f.StringVar(&cfg.Owner, "owner", "", "")
	f.IntVar(&cfg.Batch, "batch", delivery.DefaultBatch, "")
	f.IntVar(&cfg.Concurrency, "concurrency", 0, "")
	f.StringVar(&cfg.RedisURL, "redis-url", "", "")
	f.StringVar(&cfg.AMQPURL, "amqp-url", "", "")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "")
	return cmd
}

// benchProducerChildCmd is the producer process of steady.
func benchProducerChildCmd() *cobra.Command {
	cfg := delivery.ProducerConfig{}
	var workspaces string
	cmd := &cobra.Command{
		Use:    "producer-child",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Workspaces, err = delivery.ParseUUIDs(workspaces); err != nil {
				return err
			}
			return delivery.RunProducerChild(cmd.Context(), cfg, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.AppDSN, "app-dsn", "", "")
	f.StringVar(&workspaces, "workspaces", "", "")
	f.IntVar(&cfg.Rate, "rate", delivery.DefaultRate, "")
	f.DurationVar(&cfg.Duration, "duration", delivery.DefaultDuration, "")
	f.IntVar(&cfg.Conns, "conns", delivery.DefaultProducerConns, "")
	f.StringVar(&cfg.RelayRedisURL, "relay-redis", "", "")
	f.StringVar(&cfg.RelayPrefix, "relay-prefix", "", "")
	return cmd
}

func benchStormCmd() *cobra.Command {
	cfg := storm.Config{}
	var scenarios string
	cmd := &cobra.Command{
		Use:   "storm",
		Short: "Measure retry storms, completed-key replays, a broker outage and a PostgreSQL restart",
		Long: "Starts a private PostgreSQL cluster (initdb into a temporary directory, its own port;\n" +
			"as the postgres OS user when run as root), and runs the once binary's serve, dispatch and\n" +
			"work as subprocesses on fresh databases of it, with this environment (so pool and\n" +
			"dispatch settings apply) plus the bench's database, secrets and broker prefix.\n" +
			"storm and replays run --repetitions times, interleaved; outage and restart once.\n" +
			"Prints a Markdown table with a pass/fail column against the targets of docs/benchmarks.md on stdout,\n" +
			"progress on stderr. The cluster, databases and Redis keys it makes are removed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Scenarios, err = storm.ParseScenarios(scenarios); err != nil {
				return err
			}
			return runSubprocessBench(cmd, &cfg.Binary, func(ctx context.Context) error {
				_, err := storm.Run(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&scenarios, "scenarios", storm.DefaultScenarios, "scenarios to run (storm, replays, outage, restart), comma-separated")
	f.IntVar(&cfg.Repetitions, "repetitions", storm.DefaultRepetitions, "runs of storm and replays, interleaved")
	f.IntVar(&cfg.StormRequests, "requests", storm.DefaultStormRequests, "identical requests of the storm, sent at once")
	f.IntVar(&cfg.ReplayKeys, "replay-keys", storm.DefaultReplayKeys, "completed keys replayed")
	f.IntVar(&cfg.ReplayConcurrency, "replay-concurrency", storm.DefaultReplayConcurrency, "replays of each key sent at once")
	f.DurationVar(&cfg.Outage, "outage", storm.DefaultOutage, "how long the broker is cut")
	f.IntVar(&cfg.Rate, "rate", storm.DefaultRate, "requests per second of the producers during the outage and the restart")
	f.DurationVar(&cfg.Around, "around", storm.DefaultAround, "how long the producers run before a fault and after it ends")
	f.DurationVar(&cfg.DrainTimeout, "drain-timeout", storm.DefaultDrainTimeout, "how long to wait for the backlog to drain after the load")
	f.DurationVar(&cfg.PostgresDown, "pg-down", storm.DefaultPostgresDown, "how long PostgreSQL stays stopped in the restart")
	f.IntVar(&cfg.MaxConnections, "pg-max-connections", storm.DefaultMaxConnections, "max_connections of the private cluster")
	f.StringVar(&cfg.PostgresBin, "pg-bin", "", "directory of initdb and pg_ctl (default: the PATH, else the newest /usr/lib/postgresql/*/bin)")
	f.StringVar(&cfg.RedisURL, "redis-url", storm.DefaultRedisURL, "Redis of the outage and restart (the bench uses a key prefix of its own)")
	f.StringVar(&cfg.PoolSetting, "pool-setting", storm.DefaultPoolSetting, "environment variable that bounds a process's database pool, read through app.Config")
	f.StringVar(&cfg.Binary, "binary", "", "the once binary to run (default: once beside this executable)")
	return cmd
}

func benchHTTPCmd() *cobra.Command {
	cfg := storm.HTTPConfig{}
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
			if cfg.Conns, err = storm.ParseConns(conns); err != nil {
				return err
			}
			return runSubprocessBench(cmd, &cfg.Binary, func(ctx context.Context) error {
				return storm.RunHTTP(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Repetitions, "repetitions", storm.DefaultHTTPRepetitions, "repetitions, interleaved, each on a fresh database")
	f.StringVar(&conns, "conns", storm.DefaultHTTPConns, "connection counts (and pgbench clients), comma-separated")
	f.DurationVar(&cfg.Duration, "duration", storm.DefaultHTTPDuration, "how long each variant runs at each connection count")
	f.DurationVar(&cfg.Warmup, "warmup", storm.DefaultHTTPWarmup, "uncounted warm-up before each variant")
	f.IntVar(&cfg.MaxConnections, "pg-max-connections", storm.DefaultMaxConnections, "max_connections of the private cluster")
	f.StringVar(&cfg.SynchronousCommit, "pg-synchronous-commit", storm.DefaultSynchronousCommit, "synchronous_commit of the private cluster (off: commits do not wait for a shared disk)")
	f.StringVar(&cfg.PostgresBin, "pg-bin", "", "directory of initdb, pg_ctl and pgbench (default: the PATH, else the newest /usr/lib/postgresql/*/bin)")
	f.StringVar(&cfg.Binary, "binary", "", "the once binary to run (default: once beside this executable)")
	f.StringVar(&cfg.ProfileDir, "profile-dir", "", "write a CPU profile (pprof) of once serve and the database's pg_stat_statements (the cluster preloads it) per variant, connection count and repetition into this directory")
	f.BoolVar(&cfg.StoreCreates, "store-creates", false, "also run store creates (POST /v1/stores: the store, its operation, its outbox event and the idempotency record; serve runs no Dispatcher or worker)")
	f.BoolVar(&cfg.Relay, "relay", false, "also run plain, idempotent (and store) creates on a second serve with the relay on (ONCE_RELAY=true, Redis Streams), each right after its relay-off twin: what the relay costs the write path")
	f.BoolVar(&cfg.RecordDesigns, "record-designs", false, "also run pgbench on two other designs of the idempotency record (written once with no read first; the in_progress row then its update, used before)")
	return cmd
}

// runSubprocessBench runs a bench whose processes are the once binary
// (--binary, by default the once beside this executable, as `make build`
// leaves them in bin/), until it ends or the bench is interrupted.
func runSubprocessBench(cmd *cobra.Command, binary *string, run func(ctx context.Context) error) error {
	if *binary == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		*binary = filepath.Join(filepath.Dir(self), "once")
	}
	if _, err := os.Stat(*binary); err != nil {
		return fmt.Errorf("the once binary %s: %w (run `make build`, or pass --binary)", *binary, err)
	}
	return untilInterrupted(cmd, run)
}

// runDeliveryBench runs a bench of bench/delivery (drain, steady, fairness), whose
// Dispatcher and producer processes are this binary run again, with the
// Dispatcher counts of --dispatchers, until it ends or is interrupted.
func runDeliveryBench(cmd *cobra.Command, c *delivery.Common, dispatchers string, run func(ctx context.Context) error) error {
	var err error
	if c.Dispatchers, err = delivery.ParseCounts("dispatchers", dispatchers); err != nil {
		return err
	}
	if c.Binary, err = os.Executable(); err != nil {
		return err
	}
	return untilInterrupted(cmd, run)
}

// untilInterrupted runs run with a context that ends on SIGINT or SIGTERM.
func untilInterrupted(cmd *cobra.Command, run func(ctx context.Context) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx)
}

func benchSoakCmd() *cobra.Command {
	cfg := storm.SoakConfig{}
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "A sustained load with retention on a short schedule, sampled every minute",
		Long: "Starts a private PostgreSQL cluster and the once binary's serve (API only), dispatch and\n" +
			"work on a fresh database of it, measures for --calibrate how many store creates a second\n" +
			"the service accepts, then sends --fraction of that for --duration (each create: an outbox\n" +
			"event, an idempotency record, a job). The bench runs the service's own retention cleaners\n" +
			"every --cleanup-every with a retention of --retention. Every --sample-every it prints a\n" +
			"row: creates/s, HTTP p99, commit→publish p99, claim p99, outbox and idempotency sizes and\n" +
			"dead tuples, RSS and goroutines of each process; then the steadiness checks. With\n" +
			"--open-snapshot D a transaction holds a snapshot open for D from --open-snapshot-at.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSubprocessBench(cmd, &cfg.Binary, func(ctx context.Context) error {
				return storm.RunSoak(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 30*time.Minute, "how long the load runs (after the calibration)")
	f.BoolVar(&cfg.Relay, "relay", true, "ONCE_RELAY of the processes: true, the default configuration (serve publishes its own events); false, every event through the Dispatcher")
	// The calibration measures the API alone; each create then also costs
	// a delivery, a job and a call to the simulator, on the same cores.
	// At 0.15 the whole pipeline takes about half of a 2-core machine; at
	// 0.25 it saturated one (docs/benchmarks.md, "Steady for months?").
	f.Float64Var(&cfg.Fraction, "fraction", 0.15, "fraction of the measured capacity (of the API alone) the load runs at")
	f.DurationVar(&cfg.Calibrate, "calibrate", 20*time.Second, "how long the capacity is measured")
	f.DurationVar(&cfg.SampleEvery, "sample-every", time.Minute, "width of one row")
	f.DurationVar(&cfg.OpenSnapshot, "open-snapshot", 0, "hold a snapshot open this long (0: none)")
	f.DurationVar(&cfg.OpenSnapshotAt, "open-snapshot-at", 4*time.Minute, "when into the load the snapshot opens")
	f.DurationVar(&cfg.Retention, "retention", 5*time.Minute, "retention of dispatched events and idempotency records during the soak")
	f.DurationVar(&cfg.CleanupEvery, "cleanup-every", 30*time.Second, "how often the retention runs")
	f.DurationVar(&cfg.PartitionWidth, "partition-width", time.Minute, "ONCE_OUTBOX_PARTITION_INTERVAL of the processes")
	f.IntVar(&cfg.MaxConnections, "pg-max-connections", storm.DefaultMaxConnections, "max_connections of the private cluster")
	f.StringVar(&cfg.PostgresBin, "pg-bin", "", "directory of initdb and pg_ctl (default: the PATH, else the newest /usr/lib/postgresql/*/bin)")
	f.StringVar(&cfg.RedisURL, "redis-url", storm.DefaultRedisURL, "Redis Streams the processes deliver through (a key prefix of its own)")
	f.StringVar(&cfg.Binary, "binary", "", "the once binary to run (default: once beside this executable)")
	return cmd
}

func benchRetentionCmd() *cobra.Command {
	cfg := retention.Config{}
	cmd := &cobra.Command{
		Use:   "retention",
		Short: "WAL and time of removing old outbox events (partition drop vs batched DELETE) and idempotency records",
		Long: "On a private PostgreSQL cluster, per repetition and on a fresh database each: --rows dispatched\n" +
			"events removed by dropping their partition, as many removed by the batched DELETE, and as\n" +
			"many expired idempotency records removed by their cleaner. Prints the WAL written\n" +
			"(pg_current_wal_insert_lsn before and after), the time, and the size before and after;\n" +
			"median (min–max) of --reps interleaved repetitions.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return untilInterrupted(cmd, func(ctx context.Context) error {
				return retention.Run(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Rows, "rows", 1_000_000, "rows removed per measurement")
	f.IntVar(&cfg.Reps, "reps", 3, "repetitions, interleaved")
	f.IntVar(&cfg.Workspaces, "workspaces", 100, "workspaces the rows are spread over")
	f.IntVar(&cfg.Batch, "batch", 500, "rows per transaction of the batched DELETEs (ONCE_CLEANUP_BATCH)")
	f.StringVar(&cfg.PostgresBin, "pg-bin", "", "directory of initdb and pg_ctl (default: the PATH, else the newest /usr/lib/postgresql/*/bin)")
	return cmd
}

func benchWorkCmd() *cobra.Command {
	cfg := work.Config{}
	var scenarios, workers string
	var workEnv []string
	cmd := &cobra.Command{
		Use:   "work",
		Short: "One once work against once sim: jobs/s beside its limits, fairness, a platform's outage, a throttling shop",
		Long: "Starts a private PostgreSQL cluster and, per scenario, variant and repetition, a fresh database with\n" +
			"the once binary's serve (API only), dispatch, one work and sim as processes, on Redis Streams.\n" +
			"throughput: a backlog of store verifications across distinct shops, then the worker: jobs/s beside\n" +
			"slots ÷ latency and cores ÷ CPU per job, and the same with one slot. fairness: workspace B's few jobs\n" +
			"behind A's backlog beside alone. outage: shopify down while shopify and amazon jobs arrive. throttle:\n" +
			"one shop's jobs against a per-shop bucket beside other shops. push (run when named): how soon a client\n" +
			"learns an operation ended, by a signed webhook to a receiver in this process, by ?wait= on a second\n" +
			"serve and by polling each second (the peer); push-outage: the receiver down for --receiver-down.\n" +
			"throttle-platform (run when named): jobs of many amazon shops against one bucket of the whole platform.\n" +
			"fairness-slow (run when named): workspace N's fast jobs beside workspace H's shops answering slowly.\n" +
			"ordering (run when named): publications of many products, several live per product and store, a second\n" +
			"once dispatch on, one worker killed -9 every --kill-every: per key, calls in commit order, never two at once.\n" +
			"--workers 1,3 runs fairness, outage, throttle, throttle-platform, fairness-slow and ordering with 1 and 3\n" +
			"once work processes in every repetition (make bench-fleet).\n" +
			"Figures are read after each run from\n" +
			"PostgreSQL (as the superuser) and the simulator; median (min–max) of --reps interleaved repetitions.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Scenarios = strings.Split(scenarios, ",")
			var err error
			if cfg.Workers, err = work.ParseWorkers(workers); err != nil {
				return err
			}
			for _, kv := range workEnv {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--work-env %q: want NAME=value", kv)
				}
				cfg.WorkEnv = append(cfg.WorkEnv, k, v)
			}
			return runSubprocessBench(cmd, &cfg.Binary, func(ctx context.Context) error {
				return work.Run(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&scenarios, "scenarios", work.DefaultScenarios, "scenarios to run ("+work.AllScenarios+"), comma-separated")
	f.IntVar(&cfg.Reps, "reps", 3, "repetitions, interleaved")
	f.DurationVar(&cfg.Latency, "latency", 200*time.Millisecond, "latency of every platform call of the simulator")
	f.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "how long a run waits for its jobs to end")
	f.IntVar(&cfg.Jobs, "jobs", 2000, "throughput: jobs queued before the worker starts")
	f.IntVar(&cfg.BeforeJobs, "before-jobs", 200, "throughput: jobs of the one-slot run (0: none)")
	f.IntVar(&cfg.Backlog, "backlog", 5000, "fairness: workspace A's jobs queued")
	f.IntVar(&cfg.Few, "few", 10, "fairness: workspace B's jobs")
	f.DurationVar(&cfg.OutageFor, "outage-for", time.Minute, "outage: how long shopify answers 503")
	f.DurationVar(&cfg.OutageLead, "outage-lead", 10*time.Second, "outage: jobs arrive this long before the outage and after it")
	f.IntVar(&cfg.OutageRate, "outage-rate", 20, "outage: jobs created per second, half for each platform")
	f.BoolVar(&cfg.OutageCalm, "outage-calm", true, "outage: also run the load without the outage (amazon's p99 beside it)")
	f.IntVar(&cfg.Throttled, "throttled", 200, "throttle: jobs of the throttled shop")
	f.StringVar(&cfg.ShopBucket, "shop-bucket", "40:2", "throttle: the simulator's bucket per shopify shop, capacity:leak_per_second")
	f.IntVar(&cfg.OtherRate, "other-rate", 5, "throttle: other shops' jobs per second")
	f.StringVar(&workers, "workers", "1", "once work processes of the fleet scenarios: counts, comma-separated, each run in every repetition (e.g. 1,3)")
	f.StringVar(&cfg.PlatformBucket, "platform-bucket", "10:5", "throttle-platform: the simulator's bucket of all amazon shops together, capacity:leak_per_second")
	f.IntVar(&cfg.PlatformJobs, "platform-jobs", 100, "throttle-platform: jobs, each of an amazon shop of its own")
	f.IntVar(&cfg.SlowDestinations, "slow-destinations", 32, "fairness-slow: workspace H's shops (tiktok), each a destination of its own")
	f.IntVar(&cfg.SlowJobs, "slow-jobs", 20, "fairness-slow: jobs per shop of H")
	f.DurationVar(&cfg.SlowLatency, "slow-latency", 14*time.Second, "fairness-slow: how long H's calls take to answer (the worker's ONCE_SIM_TIMEOUT is 30 s more)")
	f.IntVar(&cfg.FastJobs, "fast-jobs", 1000, "fairness-slow: workspace N's jobs, each of a shopify shop of its own, at --latency")
	f.IntVar(&cfg.OrderingJobs, "ordering-jobs", 10000, "ordering: publications, spread evenly over the keys")
	f.IntVar(&cfg.OrderingKeys, "ordering-keys", 200, "ordering: ordering keys (products, each published to one store)")
	f.IntVar(&cfg.OrderingStores, "ordering-stores", 20, "ordering: shopify stores the products are published to")
	f.DurationVar(&cfg.KillEvery, "kill-every", 3*time.Second, "ordering: how often one worker is killed -9 (and started again)")
	f.IntVar(&cfg.PushRate, "push-rate", 20, "push: operations started per second")
	f.DurationVar(&cfg.PushFor, "push-for", 30*time.Second, "push: how long operations are started")
	f.DurationVar(&cfg.ReceiverDown, "receiver-down", time.Minute, "push-outage: how long the webhook receiver answers 503")
	f.StringArrayVar(&workEnv, "work-env", nil, "NAME=value laid over the worker's environment only (repeatable), e.g. ONCE_DB_MAX_CONNS=40")
	f.StringVar(&cfg.RiverPeer, "river-peer", "", "throughput: also run River on the same work, this bench/peers binary's river-work (make bench-work builds bin/once-peers)")
	f.StringVar(&cfg.ProfileDir, "profile-dir", "", "throughput: write a CPU profile of once work, its allocations and its lock waits (mutex), and pg_stat_statements (the cluster preloads it) per run into this directory")
	f.IntVar(&cfg.ProfileSeconds, "profile-seconds", 5, "throughput: seconds of the worker's CPU profile, from its start")
	f.IntVar(&cfg.MaxConnections, "pg-max-connections", storm.DefaultMaxConnections, "max_connections of the private cluster")
	f.StringVar(&cfg.PostgresBin, "pg-bin", "", "directory of initdb and pg_ctl (default: the PATH, else the newest /usr/lib/postgresql/*/bin)")
	f.StringVar(&cfg.RedisURL, "redis-url", storm.DefaultRedisURL, "Redis Streams the processes deliver through (a key prefix of its own)")
	f.StringVar(&cfg.Binary, "binary", "", "the once binary to run (default: once beside this executable)")
	return cmd
}
