package storm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/pgcluster"
)

// HTTPConfig is what one `once-bench http` measures: the write path of
// `once serve` beside pgbench running the same statements.
type HTTPConfig struct {
	// Binary is the once executable `once serve` runs.
	Binary string
	// Repetitions of the whole sequence, each on a fresh database.
	Repetitions int
	// Conns are the client connection counts (and pgbench clients).
	Conns []int
	// Duration is how long each variant runs at each connection count,
	// after Warmup (not counted).
	Duration, Warmup time.Duration
	// PostgresBin is the directory of initdb, pg_ctl and pgbench; empty
	// finds them.
	PostgresBin string
	// MaxConnections is max_connections of the private cluster.
	MaxConnections int
	// SynchronousCommit is the private cluster's synchronous_commit.
	SynchronousCommit string
	// ProfileDir, when set, receives a CPU profile (pprof) of `once serve`
	// for each HTTP variant, connection count and repetition, taken over
	// the measured run through the ops listener (ONCE_OPS_PPROF), and the
	// database's pg_stat_statements over each run (writepath_statements.go).
	ProfileDir string
	// RecordDesigns adds pgbench running two other designs of the
	// idempotency record (pgbenchRecordOnceScript, with no read first;
	// pgbenchClaimThenCompleteScript, the in_progress row and its update
	// used before): what the database work of a fresh key costs in each.
	RecordDesigns bool
	// StoreCreates adds store creates (variantStore), with no Dispatcher
	// and no worker in `serve`, so the figure is the request alone.
	StoreCreates bool
	// Relay compares the relay on and off (ONCE_RELAY): serve runs on
	// Redis Streams with no Dispatcher and no worker, relay off, and a
	// second serve beside it with the relay on answers the "relay on"
	// variants (relayVariants) right after their relay-off twins.
	Relay bool
}

// Defaults of `once-bench http`.
const (
	DefaultHTTPRepetitions = 3
	DefaultHTTPConns       = "1,4,16"
	DefaultHTTPDuration    = 5 * time.Second
	DefaultHTTPWarmup      = time.Second
	// DefaultSynchronousCommit is off: a commit then does not wait for its
	// WAL flush, so the figures are the service's and PostgreSQL's work,
	// not the latency of a disk other processes on the machine share
	// (with it on, one client waited 7 ms per commit on this machine while
	// other benches ran). Nothing is lost but the last commits of a crash.
	DefaultSynchronousCommit = "off"
)

// ParseConns reads a comma-separated list of connection counts.
func ParseConns(s string) ([]int, error) {
	return parseList(s, "connection count", func(p string) (int, error) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 256 {
			return 0, fmt.Errorf("connection count %q must be a number between 1 and 256", p)
		}
		return n, nil
	})
}

func (c HTTPConfig) validate() error {
	var errs []error
	if c.Binary == "" {
		errs = append(errs, errors.New("the once binary is required"))
	}
	if c.Repetitions < 1 || len(c.Conns) == 0 {
		errs = append(errs, errors.New("repetitions and connection counts must be given"))
	}
	switch c.SynchronousCommit {
	case "on", "off", "local", "remote_write", "remote_apply":
	default:
		errs = append(errs, fmt.Errorf("synchronous commit %q must be on, off, local, remote_write or remote_apply", c.SynchronousCommit))
	}
	if c.Duration < time.Second || c.Warmup < 0 {
		errs = append(errs, errors.New("duration must be at least 1s (pgbench counts whole seconds), warm-up not negative"))
	}
	if c.MaxConnections < 2*slices.Max(c.Conns)+10 {
		errs = append(errs, fmt.Errorf("max connections must be at least %d (pgbench and the service's pool)", 2*slices.Max(c.Conns)+10))
	}
	return errors.Join(errs...)
}

// The variants of the write path, in the order each repetition runs them
// at each connection count.
const (
	// variantPlain creates a product draft (POST /v1/products): one row,
	// no idempotency key, no outbox.
	variantPlain = "plain create"
	// variantIdempotent registers media (POST /v1/media) with a fresh key
	// each time: one row of the same kind plus its idempotency record.
	variantIdempotent = "idempotent create"
	// variantReplay repeats completed keys of variantIdempotent: the saved
	// response, nothing executed.
	variantReplay = "completed-key replay"
	// variantStore connects a store (POST /v1/stores) with a fresh key and
	// a shop of its own each time: the store (its credentials sealed), its
	// operation, its outbox event and the idempotency record, the write a
	// job starts from (HTTPConfig.StoreCreates).
	variantStore = "store create"
	// variantPgbench is pgbench running the plain create's statements as
	// the application role under row-level security.
	variantPgbench = "pgbench, same statements"
	// variantPgbenchIdempotent is pgbench running the idempotent create's
	// statements the same way: the ceiling of the idempotent ÷ plain ratio
	// that the database work alone sets.
	variantPgbenchIdempotent = "pgbench, idempotent statements"
	// variantPgbenchRecordOnce and variantPgbenchClaimThenComplete are
	// pgbench running other designs of the record (HTTPConfig.RecordDesigns).
	variantPgbenchRecordOnce        = "pgbench, record written once, no read"
	variantPgbenchClaimThenComplete = "pgbench, claim row then update (before)"
)

var httpVariants = []string{variantPlain, variantIdempotent, variantReplay, variantPgbench, variantPgbenchIdempotent}

// relayVariants are the variants of HTTPConfig.Relay: each the same
// requests as its twin, answered by the serve with the relay on.
var relayVariants = map[string]string{
	variantPlain + ", relay on":      variantPlain,
	variantIdempotent + ", relay on": variantIdempotent,
	variantStore + ", relay on":      variantStore,
}

// relayTwin is the variant a relay-on variant repeats ("" if none).
func relayTwin(variant string) string { return relayVariants[variant] }

// variantsOf are the variants cfg runs, in order.
func variantsOf(cfg HTTPConfig) []string {
	variants := slices.Clone(httpVariants)
	if cfg.StoreCreates {
		variants = slices.Insert(variants, slices.Index(variants, variantReplay)+1, variantStore)
	}
	if cfg.RecordDesigns {
		variants = append(variants, variantPgbenchRecordOnce, variantPgbenchClaimThenComplete)
	}
	if cfg.Relay {
		// Each relay-on variant right after its twin, interleaved.
		for _, twin := range []string{variantStore, variantIdempotent, variantPlain} {
			if i := slices.Index(variants, twin); i >= 0 {
				variants = slices.Insert(variants, i+1, twin+", relay on")
			}
		}
	}
	return variants
}

// isPgbench says whether a variant is pgbench's (no service, no CPU of it).
func isPgbench(variant string) bool { return pgbenchScripts[variant] != "" }

// pgbenchScripts are the scripts of the pgbench variants.
var pgbenchScripts = map[string]string{
	variantPgbench:                  pgbenchScript,
	variantPgbenchIdempotent:        pgbenchIdempotentScript,
	variantPgbenchRecordOnce:        pgbenchRecordOnceScript,
	variantPgbenchClaimThenComplete: pgbenchClaimThenCompleteScript,
}

// httpCell is one variant at one connection count in one repetition.
type httpCell struct {
	Variant string
	Conns   int
	// PerSecond is answered requests (or pgbench transactions) per second.
	PerSecond float64
	// CPUPerRequest is the service's user+system CPU over the cell divided
	// by the requests answered; 0 for pgbench.
	CPUPerRequest time.Duration
	// ClientCPUPerRequest is the load generator's (this process's) CPU
	// over the cell divided by the requests answered: what the clients
	// took of the cores the service and PostgreSQL share; 0 for pgbench.
	ClientCPUPerRequest time.Duration
	// PostgresCPUPerRequest is the PostgreSQL server's CPU (its postmaster
	// and every process it runs, the service's backends included) over
	// the cell divided by the requests answered; 0 for pgbench.
	PostgresCPUPerRequest time.Duration
	Requests              int
}

// RunHTTP measures the write path: for each repetition a fresh database on
// a private cluster, `once serve` started on it, and at each connection
// count the variants one after another, interleaved. It prints the table
// to out and progress to progress.
func RunHTTP(ctx context.Context, cfg HTTPConfig, out, progress io.Writer) (err error) {
	if err := cfg.validate(); err != nil {
		return err
	}
	pgbench, err := findPgbench(cfg.PostgresBin)
	if err != nil {
		return err
	}
	r, settings, err := openRunner(ctx, Config{Binary: cfg.Binary, PostgresBin: cfg.PostgresBin,
		MaxConnections: cfg.MaxConnections, RedisURL: DefaultRedisURL}, progress,
		httpClusterSettings(cfg)...)
	defer func() { err = r.close(err) }()
	if err != nil {
		return err
	}
	var cells []httpCell
	for i := 1; i <= cfg.Repetitions && err == nil; i++ {
		err = r.in(ctx, fmt.Sprintf("http-%d", i), func(d *deployment) error {
			got, err := runWritePath(ctx, cfg, d, pgbench, progress)
			cells = append(cells, got...)
			return err
		})
	}
	if len(cells) > 0 {
		writeHTTPTable(out, cfg, cells)
		fmt.Fprintln(out)
		fmt.Fprintln(out, httpLegend)
		fmt.Fprintln(out)
		fmt.Fprintln(out, describeHTTP(cfg, settings, r.version))
	}
	return err
}

// httpClusterSettings are the private cluster's settings: pg_stat_statements
// too when the bench profiles (writepath_statements.go).
func httpClusterSettings(cfg HTTPConfig) []string {
	settings := []string{"synchronous_commit=" + cfg.SynchronousCommit}
	if cfg.ProfileDir != "" {
		settings = append(settings, statementsSettings...)
	}
	return settings
}

// runWritePath runs every variant at every connection count on one
// deployment.
func runWritePath(ctx context.Context, cfg HTTPConfig, d *deployment, pgbench string, progress io.Writer) ([]httpCell, error) {
	maxConns := slices.Max(cfg.Conns)
	env := writePathEnv(cfg, d.label, maxConns)
	serve, profiler, err := startProfiledServe(ctx, cfg, d, maxConns, env)
	if err != nil {
		return nil, err
	}
	api, relayAPI, relayServe, relayProfiler := d.api, d.api, serve, profiler
	if cfg.Relay {
		if relayServe, relayProfiler, err = startProfiledServe(ctx, cfg, d, maxConns, append(slices.Clone(env), "ONCE_RELAY", app.RelayOn)); err != nil {
			return nil, err
		}
		relayAPI, d.api = d.api, api
	}
	scripts, err := writePgbenchScripts(cfg, d)
	if err != nil {
		return nil, err
	}
	statements, err := newStatementsRecorder(ctx, cfg.ProfileDir, d.label, d.super, d.db.Name)
	if err != nil {
		return nil, err
	}
	var cells []httpCell
	for _, conns := range cfg.Conns {
		var completed []completedKey
		for _, variant := range variantsOf(cfg) {
			var cell httpCell
			var err error
			switch {
			case isPgbench(variant):
				if err = statements.reset(ctx); err != nil {
					break
				}
				cell, err = runPgbench(ctx, pgbench, scripts[variant], d.db.AppDSN, conns, cfg.Duration)
			default:
				base, c, pid, prof := variant, api, serve.cmd.Process.Pid, profiler
				if twin := relayTwin(variant); twin != "" {
					base, c, pid, prof = twin, relayAPI, relayServe.cmd.Process.Pid, relayProfiler
				}
				load := newWriteLoad(base, completed)
				if _, err = load.run(ctx, c, conns, cfg.Warmup); err == nil {
					err = statements.reset(ctx)
				}
				if err == nil {
					stop := prof.start(ctx, variant, conns, cfg.Duration)
					cell, err = measureLoad(ctx, load, c, conns, cfg.Duration, pid, d)
					err = errors.Join(err, stop())
				}
				if variant == variantIdempotent {
					completed = load.completed()
				}
			}
			if err == nil {
				err = statements.write(ctx, variant, conns, cell.PerSecond*cfg.Duration.Seconds())
			}
			if err != nil {
				return cells, fmt.Errorf("%s at %d connections: %w", variant, conns, err)
			}
			cell.Variant, cell.Conns = variant, conns
			cells = append(cells, cell)
			fmt.Fprintf(progress, "[%s] %-26s %3d conns: %8.0f /s, %s CPU/request, clients %s, PostgreSQL %s\n",
				d.label, variant, conns, cell.PerSecond, micros(cell.CPUPerRequest), micros(cell.ClientCPUPerRequest), micros(cell.PostgresCPUPerRequest))
		}
	}
	return cells, nil
}

// startProfiledServe starts a serve with env and, when cfg asks for
// profiles, a profiler of its own (its own ops listener, its own files).
func startProfiledServe(ctx context.Context, cfg HTTPConfig, d *deployment, maxConns int, env []string) (*process, *serveProfiler, error) {
	var profiler *serveProfiler
	if cfg.ProfileDir != "" {
		var err error
		if profiler, err = newServeProfiler(cfg.ProfileDir, d.label); err != nil {
			return nil, nil, err
		}
		env = append(slices.Clone(env), profiler.env()...)
	}
	if err := d.startServe(ctx, maxConns, env...); err != nil {
		return nil, nil, err
	}
	return d.procs[len(d.procs)-1], profiler, nil
}

// writePathEnv is the environment of the write path's serve, for a pool of
// maxConns.
func writePathEnv(cfg HTTPConfig, label string, maxConns int) []string {
	// The pool as large as the most clients, so that the service is not
	// held back by a bound pgbench does not have; the memory queue, so no
	// broker is part of the figure (these writes start no background work).
	env := []string{"ONCE_QUEUE", app.QueueMemory,
		"ONCE_DB_MAX_CONNS", strconv.Itoa(maxConns), "ONCE_DB_MAX_IDLE", strconv.Itoa(maxConns)}
	if cfg.StoreCreates || cfg.Relay {
		// A store create's event would start a job in serve's own
		// Dispatcher and worker: their CPU is not the request's.
		env = append(env, "ONCE_DISPATCHER", "false", "ONCE_WORKER", "false")
	}
	if cfg.Relay {
		// A real queue for the relay to publish to; relay off here, on in
		// the second serve.
		env = append(env, "ONCE_QUEUE", app.QueueRedis, "ONCE_REDIS_URL", DefaultRedisURL,
			"ONCE_QUEUE_PREFIX", "once-bench-"+label+"-"+uuid.NewString()[:8]+".", "ONCE_RELAY", app.RelayOff)
	}
	return env
}

// writePgbenchScripts writes the script of every pgbench variant of cfg
// and returns their paths by variant.
func writePgbenchScripts(cfg HTTPConfig, d *deployment) (map[string]string, error) {
	scripts := map[string]string{}
	for i, variant := range variantsOf(cfg) {
		if !isPgbench(variant) {
			continue
		}
		path, err := writePgbenchScript(d, fmt.Sprintf("pgbench-%d.sql", i), pgbenchScripts[variant])
		if err != nil {
			return nil, err
		}
		scripts[variant] = path
	}
	return scripts, nil
}

// completedKey is a key of the idempotent variant and the body it was
// completed with.
type completedKey struct {
	key  string
	body []byte
}

// writeLoad says what one request of a variant is and whether its answer
// is the one expected.
type writeLoad struct {
	variant string
	next    func(i int64) (path, key string, body []byte)
	ok      func(a answer) bool
	// keep collects the first keys of the idempotent variant for the
	// replays.
	mu   sync.Mutex
	keep []completedKey
}

// replayKeys is how many completed keys the replays cycle through.
const replayKeys = 256

func newWriteLoad(variant string, completed []completedKey) *writeLoad {
	l := &writeLoad{variant: variant}
	switch variant {
	case variantPlain:
		body := []byte(`{"title":"bench draft","price_minor":1999,"currency":"USD"}`)
		l.next = func(int64) (string, string, []byte) { return "/v1/products", "", body }
		l.ok = func(a answer) bool { return a.status == 201 }
	case variantIdempotent:
		prefix := "bench-" + uuid.NewString()[:8] + "-"
		l.next = func(i int64) (string, string, []byte) {
			return mediaPath, uuid.NewString(), mediaBody(prefix + strconv.FormatInt(i, 10))
		}
		l.ok = func(a answer) bool { return a.status == 201 && !a.replayed }
	case variantStore:
		// A shop of its own every time (the warm-up and the run count i
		// from 0 alike): a second store of one shop is a 409.
		l.next = func(i int64) (string, string, []byte) {
			return storesPath, uuid.NewString(), fmt.Appendf(nil, `{"platform":"shopify","name":"bench %d","external_shop_id":"bench-%s",`+
				`"credentials":{"api_key":"k","api_secret":"s"}}`, i, uuid.NewString())
		}
		l.ok = func(a answer) bool { return a.status == 201 && !a.replayed }
	case variantReplay:
		l.next = func(i int64) (string, string, []byte) {
			c := completed[int(i%int64(len(completed)))]
			return mediaPath, c.key, c.body
		}
		l.ok = func(a answer) bool { return a.status == 201 && a.replayed }
	}
	return l
}

func (l *writeLoad) remember(key string, body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.keep) < replayKeys {
		l.keep = append(l.keep, completedKey{key: key, body: body})
	}
}

func (l *writeLoad) completed() []completedKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keep)
}

// loadResult is what conns clients sending one after another got.
type loadResult struct {
	ok      int64
	elapsed time.Duration
}

// run sends requests over conns connections (loadConn), each client one
// after another, for d. A wrong answer or a failed connection ends the run
// with an error: a figure of failures is no figure.
func (l *writeLoad) run(ctx context.Context, c *client, conns int, d time.Duration) (loadResult, error) {
	if d <= 0 {
		return loadResult{}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline := time.Now().Add(d)
	var seq, ok atomic.Int64
	var once sync.Once
	var failure error
	var wg sync.WaitGroup
	fail := func(err error) {
		once.Do(func() {
			failure = err
			cancel()
		})
	}
	lcs := make([]*loadConn, conns)
	for i := range lcs {
		lc, err := dialLoad(ctx, c.base, c.token)
		if err != nil {
			return loadResult{}, err
		}
		defer lc.close()
		lcs[i] = lc
	}
	start := time.Now()
	for _, lc := range lcs {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				i := seq.Add(1)
				path, key, body := l.next(i)
				a, err := lc.post(path, key, body)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					fail(err)
					return
				}
				if !l.ok(a) {
					fail(fmt.Errorf("answered %s (replayed %t): %.300s", statusName(a.status), a.replayed, a.body))
					return
				}
				if l.variant == variantIdempotent {
					l.remember(key, body)
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if failure != nil {
		return loadResult{}, failure
	}
	return loadResult{ok: ok.Load(), elapsed: time.Since(start)}, ctx.Err()
}

// measureLoad runs the load for d and reads the service's CPU time around
// it. The clients are this process; the service is another, so its CPU is
// the service's own.
func measureLoad(ctx context.Context, l *writeLoad, c *client, conns int, d time.Duration, pid int, dep *deployment) (httpCell, error) {
	pgBefore, err := dep.postgresCPU(ctx)
	if err != nil {
		return httpCell{}, err
	}
	before, clientBefore, err := serviceAndClientCPU(pid)
	if err != nil {
		return httpCell{}, err
	}
	res, err := l.run(ctx, c, conns, d)
	if err != nil {
		return httpCell{}, err
	}
	after, clientAfter, err := serviceAndClientCPU(pid)
	if err != nil {
		return httpCell{}, err
	}
	pgAfter, err := dep.postgresCPU(ctx)
	if err != nil {
		return httpCell{}, err
	}
	cell := httpCell{Requests: int(res.ok), PerSecond: float64(res.ok) / res.elapsed.Seconds()}
	if res.ok > 0 {
		cell.CPUPerRequest = (after - before) / time.Duration(res.ok)
		cell.ClientCPUPerRequest = (clientAfter - clientBefore) / time.Duration(res.ok)
		cell.PostgresCPUPerRequest = (pgAfter - pgBefore) / time.Duration(res.ok)
	}
	return cell, nil
}

// serviceAndClientCPU reads the CPU time of the service (process pid) and
// of the clients (this process).
func serviceAndClientCPU(pid int) (service, client time.Duration, err error) {
	if service, err = processCPU(pid); err != nil {
		return 0, 0, err
	}
	client, err = processCPU(os.Getpid())
	return service, client, err
}

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat:
// 100 on every Linux architecture Go runs on.
const clockTicks = 100

// processCPU is the user+system CPU time pid has used so far.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("service CPU time: %w", err)
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start with field 3 (state).
	_, rest, ok := bytes.Cut(b, []byte(") "))
	fields := strings.Fields(string(rest))
	if !ok || len(fields) < 13 {
		return 0, errors.New("service CPU time: unexpected /proc stat format")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("service CPU time: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// pgbenchScript is the plain create's database work as the service sends
// it (adapters/postgres UnitOfWork, ProductRepository.Create): BEGIN and
// the workspace setting in one round trip (pgbench sends commands joined
// by \; as one query), then the INSERT bun builds and COMMIT in another
// (the INSERT is held for the COMMIT, pipelined_conn.go). The membership check
// is not part of it: the service answers it from its cache
// (ONCE_AUTH_CACHE_TTL), one read per member and TTL.
const pgbenchScript = `BEGIN \; SELECT set_config('app.workspace_id', '%[1]s', true);
INSERT INTO "products" ("id", "workspace_id", "title", "description", "price_minor", "currency", "media_ids", "revision", "created_at", "updated_at") VALUES (gen_random_uuid(), '%[1]s', 'bench draft', '', 1999, 'USD', '{}', 1, now(), now()) \; COMMIT;
`

// pgbenchIdempotentScript is the idempotent create's database work as the
// service now sends it (UnitOfWork, IdempotencyStore.Claim and Complete,
// MediaRepository.Create; adapters/postgres/pipelined_conn.go): BEGIN, the
// workspace setting, the scope's try-lock and the read of its record in
// one round trip; then the media INSERT, the record's INSERT, completed,
// and COMMIT as one query. The key is a random one per transaction, the
// response body about the size of the real one.
const pgbenchIdempotentScript = `\set k random(1, 9000000000000000000)
BEGIN \; SELECT set_config('app.workspace_id', '%[1]s', true) \; SELECT ` + pgbenchScopeLock + ` \;
SELECT status, fingerprint_key_id, request_fingerprint, response_status, response_headers, response_body,
       created_at, completed_at, expires_at, expires_at <= now() AS expired
  FROM idempotency_requests
 WHERE ` + pgbenchRecordScope + `;
` + pgbenchMediaInsert + ` \; ` + pgbenchCompletedRecordInsert + ` \; COMMIT;
`

// pgbenchClaimThenCompleteScript is the design the service used before
// (2026-12-07), for comparison: BEGIN and the workspace setting; one
// statement reading the record, taking the try-lock and inserting an
// in_progress row; then the media INSERT, the row's completing UPDATE and
// COMMIT as one query.
const pgbenchClaimThenCompleteScript = `\set k random(1, 9000000000000000000)
BEGIN \; SELECT set_config('app.workspace_id', '%[1]s', true);
WITH found AS (
SELECT status, fingerprint_key_id, request_fingerprint, response_status, response_headers, response_body,
       created_at, completed_at, expires_at, expires_at <= now() AS expired
  FROM idempotency_requests
 WHERE ` + pgbenchRecordScope + `),
claim AS (
  SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM found) OR (SELECT expired FROM found)
              THEN ` + pgbenchScopeLock + `
         END AS locked
),
inserted AS (
  INSERT INTO idempotency_requests (workspace_id, user_id, method, path, idempotency_key,
         fingerprint_key_id, request_fingerprint, status, created_at, expires_at)
  SELECT '%[1]s', '%[2]s', 'POST', '/v1/media', md5(:k::text)::uuid, 'k1', sha256(:k::text::bytea), 'in_progress', now(), now() + interval '48 hours'
    FROM claim WHERE claim.locked AND NOT EXISTS (SELECT 1 FROM found)
  ON CONFLICT (workspace_id, user_id, method, path, idempotency_key) DO NOTHING
  RETURNING true AS inserted)
SELECT found.*, claim.locked, (SELECT inserted FROM inserted) AS inserted FROM claim LEFT JOIN found ON true;
` + pgbenchMediaInsert + ` \; UPDATE idempotency_requests SET status = 'completed', response_status = 201, response_headers = '{"Location":"/v1/media/bench"}'::jsonb, response_body = convert_to(repeat('x', 420), 'UTF8'), completed_at = now() WHERE ` + pgbenchRecordScope + ` AND status = 'in_progress' \; COMMIT;
`

// pgbenchRecordOnceScript is a design the service does not use, for
// comparison: the record written once, completed, in the business
// transaction's last round trip, and nothing read before. It is the least
// database work any record kept in PostgreSQL can cost, but it cannot
// replay a completed key without running the business statements first,
// nor tell a twin in flight "in progress".
const pgbenchRecordOnceScript = `\set k random(1, 9000000000000000000)
BEGIN \; SELECT set_config('app.workspace_id', '%[1]s', true);
` + pgbenchMediaInsert + ` \; ` + pgbenchCompletedRecordInsert + ` \; COMMIT;
`

// The pieces of the idempotency scripts: the key's scope (a random key per
// transaction, :k), its try-lock, the media INSERT bun builds, and a
// completed record with a response body about the size of the real one.
const (
	pgbenchRecordScope           = `workspace_id = '%[1]s' AND user_id = '%[2]s' AND method = 'POST' AND path = '/v1/media' AND idempotency_key = md5(:k::text)::uuid`
	pgbenchScopeLock             = `pg_try_advisory_xact_lock(hashtextextended('once.idempotency.bench.' || :k::text, 0))`
	pgbenchMediaInsert           = `INSERT INTO "media" ("id", "workspace_id", "filename", "content_type", "size_bytes", "object_key", "status", "variants", "created_at", "updated_at") VALUES (gen_random_uuid(), '%[1]s', 'bench.png', 'image/png', 1024, 'media/bench.png', 'awaiting_upload', '[]', now(), now())`
	pgbenchCompletedRecordInsert = `INSERT INTO idempotency_requests (workspace_id, user_id, method, path, idempotency_key, fingerprint_key_id, request_fingerprint, status, response_status, response_headers, response_body, created_at, completed_at, expires_at) VALUES ('%[1]s', '%[2]s', 'POST', '/v1/media', md5(:k::text)::uuid, 'k1', sha256(:k::text::bytea), 'completed', 201, '{"Location":"/v1/media/bench"}'::jsonb, convert_to(repeat('x', 420), 'UTF8'), now(), now(), now() + interval '48 hours')`
)

// writePgbenchScript writes a script of the deployment's workspace (and a
// user id of its own) into the deployment's directory.
func writePgbenchScript(d *deployment, name, script string) (string, error) {
	if _, err := uuid.Parse(d.workspace); err != nil {
		return "", fmt.Errorf("workspace id %q: %w", d.workspace, err)
	}
	path := filepath.Join(d.dir, name)
	return path, os.WriteFile(path, fmt.Appendf(nil, script, d.workspace, uuid.NewString()), 0o644)
}

var pgbenchTPS = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// runPgbench runs the script with conns clients for d (whole seconds).
func runPgbench(ctx context.Context, pgbench, script, dsn string, conns int, d time.Duration) (httpCell, error) {
	threads := min(conns, 2)
	cmd := exec.CommandContext(ctx, pgbench, "--no-vacuum", "--client", strconv.Itoa(conns), "--jobs", strconv.Itoa(threads),
		"--time", strconv.Itoa(int(d.Round(time.Second)/time.Second)), "--file", script, dsn)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return httpCell{}, fmt.Errorf("pgbench: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	m := pgbenchTPS.FindSubmatch(stdout.Bytes())
	if m == nil {
		return httpCell{}, fmt.Errorf("pgbench printed no tps: %s", stdout.String())
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	return httpCell{PerSecond: tps}, err
}

// findPgbench is pgbench beside initdb, else on the PATH.
func findPgbench(bin string) (string, error) {
	if bin == "" {
		bin, _ = pgcluster.FindBin()
	}
	if p := filepath.Join(bin, "pgbench"); bin != "" {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("pgbench")
	if err != nil {
		return "", errors.New("pgbench not found beside pg_ctl nor on the PATH; give --pg-bin")
	}
	return p, nil
}
