package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverPeer drains River jobs: the backlog is inserted with InsertManyTx
// (one transaction per workspace chunk, like a producer committing), and a
// worker XADDs each job's args to the stream, one job per message, which
// is how River is meant to be used. Workers and FetchCooldown are the
// tuning River was measured with in docs/benchmarks.md.
type riverPeer struct {
	Workers       int
	FetchCooldown time.Duration
	// MaxConns bounds the client's pgx pool; 0 keeps pgxpool's default.
	MaxConns int32
	RedisURL string
}

// drainArgs is the job: the event as its args.
type drainArgs eventBody

func (drainArgs) Kind() string { return "drain" }

type drainWorker struct {
	river.WorkerDefaults[drainArgs]
	rdb    *redis.Client
	stream string
}

func (w *drainWorker) Work(ctx context.Context, job *river.Job[drainArgs]) error {
	return w.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: w.stream,
		Values: []any{"id", job.Args.ID, "payload", job.EncodedArgs},
	}).Err()
}

func (riverPeer) Name() string    { return "river" }
func (riverPeer) IDField() string { return "id" }

func (r riverPeer) Load(ctx context.Context, dbURL, _ string, events []event) error {
	pool, driver, err := openMigrated(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	// An insert-only client: no queues, nothing is worked.
	client, err := river.NewClient(driver, &river.Config{Logger: quietLogger()})
	if err != nil {
		return err
	}
	for _, ws := range byWorkspace(events) {
		for _, part := range chunks(ws, 1000) {
			params := make([]river.InsertManyParams, len(part))
			for i, e := range part {
				params[i] = river.InsertManyParams{Args: drainArgs(bodyOf(e))}
			}
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
				_ = tx.Rollback(ctx)
				return err
			}
			if err := tx.Commit(ctx); err != nil {
				return err
			}
		}
	}
	// The planner sees the backlog as it is, as it would on a busy table.
	_, err = pool.Exec(ctx, "ANALYZE river_job")
	return err
}

func (r riverPeer) Start(ctx context.Context, dbURL, stream string) (func(context.Context) error, error) {
	poolCfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	if r.MaxConns > 0 {
		poolCfg.MaxConns = r.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return nil, err
	}
	rdb, err := newRedis(r.RedisURL)
	if err != nil {
		pool.Close()
		return nil, err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &drainWorker{rdb: rdb, stream: stream})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: r.Workers}},
		FetchCooldown: r.FetchCooldown,
		Workers:       workers,
		Logger:        quietLogger(),
	})
	if err != nil {
		pool.Close()
		rdb.Close()
		return nil, err
	}
	if err := client.Start(ctx); err != nil {
		pool.Close()
		rdb.Close()
		return nil, err
	}
	return func(ctx context.Context) error {
		err := client.Stop(ctx)
		rdb.Close()
		pool.Close()
		return err
	}, nil
}

// openMigrated opens a pool on dbURL, brings River's tables to its
// version and returns the pool and River's driver on it.
func openMigrated(ctx context.Context, dbURL string) (*pgxpool.Pool, *riverpgxv5.Driver, error) {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, nil, err
	}
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quietLogger()})
	if err == nil {
		_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	return pool, driver, nil
}

// quietLogger lets through what a peer reports as a problem, not its
// per-job chatter.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
