package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// `peers river-work` is River doing the job `once-bench work --scenarios
// throughput` measures once doing: a store's credential check. Per job the
// worker reads the store's row, calls the same simulator (`once sim`) over
// HTTP as once's worker does (POST /platform/verifications, the job's
// token as Idempotency-Key, the credentials in headers), and records the
// outcome in one transaction (the store's status and an event row, as
// once records the store and its outbox event); River then completes the
// job with its batch completer. once-bench starts it twice per run:
// `load` queues the backlog and exits (before the clock), `run` works it
// until SIGTERM, and once-bench reads its CPU from /proc and its span from
// river_job.

// Paths and headers of the simulator's wire (adapters/simulator/simhttp),
// repeated here: this module does not depend on once's.
const (
	simVerifyPath   = "/platform/verifications"
	simIdempotency  = "Idempotency-Key"
	simAPIKeyHeader = "X-Platform-Api-Key"
	simSecretHeader = "X-Platform-Api-Secret"
)

// verifyArgs is the job: which store to check.
type verifyArgs struct {
	Store int64 `json:"store"`
}

func (verifyArgs) Kind() string { return "verify_store" }

type verifyWorker struct {
	river.WorkerDefaults[verifyArgs]
	pool   *pgxpool.Pool
	http   *http.Client
	simURL string
}

func (w *verifyWorker) Work(ctx context.Context, job *river.Job[verifyArgs]) error {
	var platform, shop, key, secret string
	if err := w.pool.QueryRow(ctx, `SELECT platform, external_shop_id, api_key, api_secret FROM bench_store WHERE id = $1`,
		job.Args.Store).Scan(&platform, &shop, &key, &secret); err != nil {
		return fmt.Errorf("read store: %w", err)
	}
	valid, reason, err := w.verify(ctx, fmt.Sprintf("river-%d", job.ID), platform, shop, key, secret)
	if err != nil {
		return err
	}
	status := "active"
	if !valid {
		status = "invalid"
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE bench_store SET status = $2, reason = $3, updated_at = now() WHERE id = $1`,
			job.Args.Store, status, reason); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO bench_event (store_id, kind, payload) VALUES ($1, 'store.verified', $2)`,
			job.Args.Store, fmt.Sprintf(`{"store":%d,"status":%q}`, job.Args.Store, status))
		return err
	})
}

// verify is the simulator's credential check.
func (w *verifyWorker) verify(ctx context.Context, token, platform, shop, key, secret string) (bool, string, error) {
	body, err := json.Marshal(map[string]string{"platform": platform, "external_shop_id": shop})
	if err != nil {
		return false, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.simURL+simVerifyPath, bytes.NewReader(body))
	if err != nil {
		return false, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(simIdempotency, token)
	req.Header.Set(simAPIKeyHeader, key)
	req.Header.Set(simSecretHeader, secret)
	resp, err := w.http.Do(req)
	if err != nil {
		return false, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, "", fmt.Errorf("simulator: %s", resp.Status)
	}
	var answer struct {
		Valid  bool   `json:"valid"`
		Reason string `json:"reason"`
	}
	err = json.NewDecoder(resp.Body).Decode(&answer)
	return answer.Valid, answer.Reason, err
}

// riverWorkMain runs `peers river-work load|run` and returns the exit code.
func riverWorkMain(args []string) int {
	if len(args) == 0 || (args[0] != "load" && args[0] != "run") {
		fmt.Fprintln(os.Stderr, "usage: peers river-work load|run --db URL [--jobs N] [--sim URL --workers N --max-conns N]")
		return 2
	}
	fs := flag.NewFlagSet("river-work", flag.ContinueOnError)
	db := fs.String("db", "", "PostgreSQL URL of the run's database (a role that may create tables)")
	jobs := fs.Int("jobs", 2000, "load: stores, one job each, of distinct shopify shops")
	sim := fs.String("sim", "", "run: the simulator's URL")
	workers := fs.Int("workers", 256, "run: River MaxWorkers (once work's ONCE_WORK_CONCURRENCY default)")
	maxConns := fs.Int("max-conns", 10, "run: the pgx pool's size (once's ONCE_DB_MAX_CONNS default)")
	cooldown := fs.Duration("fetch-cooldown", 10*time.Millisecond, "run: River FetchCooldown")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if args[0] == "load" {
		err = loadRiverWork(ctx, *db, *jobs)
	} else {
		err = runRiverWork(ctx, *db, *sim, *workers, int32(*maxConns), *cooldown)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers river-work:", err)
		return 1
	}
	return 0
}

// loadRiverWork migrates River, makes the store and event tables and
// queues n jobs, one per store, 1000 per transaction.
func loadRiverWork(ctx context.Context, dbURL string, n int) error {
	pool, driver, err := openMigrated(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `
		CREATE TABLE bench_store (id bigint PRIMARY KEY, platform text NOT NULL, external_shop_id text NOT NULL,
			api_key text NOT NULL, api_secret text NOT NULL, status text NOT NULL DEFAULT 'pending', reason text,
			updated_at timestamptz NOT NULL DEFAULT now());
		CREATE TABLE bench_event (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, store_id bigint NOT NULL,
			kind text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO bench_store (id, platform, external_shop_id, api_key, api_secret)
			SELECT i, 'shopify', 'rt' || i, 'ak', 'sk_bench_secret' FROM generate_series(1, `+fmt.Sprint(n)+`) i;`); err != nil {
		return err
	}
	client, err := river.NewClient(driver, &river.Config{Logger: quietLogger()}) // insert-only
	if err != nil {
		return err
	}
	for from := 1; from <= n; from += 1000 {
		params := make([]river.InsertManyParams, 0, 1000)
		for id := from; id <= n && id < from+1000; id++ {
			params = append(params, river.InsertManyParams{Args: verifyArgs{Store: int64(id)}})
		}
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := client.InsertManyTx(ctx, tx, params)
			return err
		}); err != nil {
			return err
		}
	}
	_, err = pool.Exec(ctx, "ANALYZE river_job, bench_store")
	return err
}

// runRiverWork works the queue until ctx ends (SIGTERM).
func runRiverWork(ctx context.Context, dbURL, simURL string, workers int, maxConns int32, cooldown time.Duration) error {
	if simURL == "" {
		return errors.New("--sim is required")
	}
	poolCfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	poolCfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(context.Background(), poolCfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	// As once's simulator client in a worker: a clone of the default
	// transport keeping a connection for each call it may have out.
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = workers, workers
	ws := river.NewWorkers()
	river.AddWorker(ws, &verifyWorker{pool: pool, http: &http.Client{Transport: t, Timeout: 30 * time.Second}, simURL: simURL})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		FetchCooldown: cooldown,
		Workers:       ws,
		Logger:        quietLogger(),
	})
	if err != nil {
		return err
	}
	if err := client.Start(context.Background()); err != nil {
		return err
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Stop(stopCtx)
}
