package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// crashRun is the world of the crash test: the API and a Dispatcher in
// this process, `once sim` and `once work` as subprocesses.
type crashRun struct {
	t       *testing.T
	api     *apitest.Server
	simAddr string
	ledger  string
	sim     *process
	admin   *simhttp.Admin
	env     []string
}

// task is one background job the test started: its operation, and what
// the simulator's ledger must show for it.
type task struct {
	op uuid.UUID
	// token is the request token of a job with a side effect: exactly one
	// effect of kind under it.
	kind  simhttp.Kind
	token string
	// subject is what a read-only job reads: at least one read of kind.
	subject string
}

// 500 jobs of every type with an external call, against `once sim`, while
// `once work` is killed -9 eight times: at random moments while it calls
// the simulator, and during held external calls (before and after the
// simulator acted); the simulator itself is killed -9 twice under a
// working worker. In the end every operation is final and the ledger
// shows exactly one side effect per job that has one.
//
// The queue is RabbitMQ: a killed worker's unacknowledged messages are
// delivered again at once (Redis Streams take them over after a fixed 60 s
// idle time, which would only slow the test).
func TestSimCrashWorkersAndSimulatorExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes for a while")
	}
	r := newCrashRun(t)

	// Stores the publications and syncs need, verified by an undisturbed
	// worker.
	var stores []uuid.UUID
	var tasks []task
	for i := range 50 {
		store, op := r.start("/v1/stores", r.storeBody(fmt.Sprintf("base-%d", i)))
		stores = append(stores, store)
		tasks = append(tasks, task{op: op, kind: simhttp.KindVerify, token: r.api.RequestToken(t, op)})
	}
	w := r.work()
	r.waitFinal(tasks, 2*time.Minute)
	w.kill()

	// Each worker is killed once it has reached the simulator: at a random
	// moment after that, or while one of its calls of a kind with side
	// effects is held, before or after the simulator acted.
	holds := []simhttp.Fault{
		{Kind: simhttp.KindListing, Action: simhttp.ActionHold},
		{Kind: simhttp.KindGenerate, Action: simhttp.ActionHoldAfter},
		{Kind: simhttp.KindVerify, Action: simhttp.ActionHold},
		{Kind: simhttp.KindListing, Action: simhttp.ActionHoldAfter},
	}
	// The jobs arrive while the workers crash. One job of each held kind
	// is kept back and started only once its hold is set, so the held call
	// comes however fast the others were done.
	starts := r.jobStarts(stores)
	spares := make([]jobStart, len(holds))
	for i, h := range holds {
		spares[i] = takeStart(&starts, h.Kind)
	}
	started := make(chan []task, 1)
	go func() { started <- runStarts(starts) }()
	// Twice, the simulator is killed too, under the working worker, and
	// started again on the same ledger.
	const kills = 8
	for i := range kills {
		w := r.work()
		if i%2 == 1 {
			tasks = append(tasks, r.killDuringHold(w, holds[i/2], spares[i/2]))
			continue
		}
		r.waitCalls()
		if i == 2 || i == 6 {
			r.sim.kill()
			r.sim = startSim(t, r.simAddr, r.ledger)
			r.waitCalls()
		}
		time.Sleep(time.Duration(rand.IntN(800)) * time.Millisecond)
		w.kill()
	}
	tasks = append(tasks, <-started...)
	require.Len(t, tasks, 550)
	t.Logf("after %d kills: %d of %d operations final", kills, len(tasks)-r.unfinished(), len(tasks))

	r.work()
	r.waitFinal(tasks, 3*time.Minute)
	r.checkLedger(tasks)
}

func newCrashRun(t *testing.T) *crashRun {
	db := pgtest.New(t)
	r := &crashRun{t: t, simAddr: freeAddr(t), ledger: filepath.Join(t.TempDir(), "ledger.jsonl")}
	r.sim = startSim(t, r.simAddr, r.ledger)
	r.admin = simhttp.NewAdmin("http://" + r.simAddr)

	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher, cfg.Worker = app.QueueAMQP, true, false
	cfg.DispatchPollInterval = 100 * time.Millisecond
	deleteAMQPTopicsLater(t, cfg.AMQPURL, cfg.QueuePrefix)
	r.api = apitest.Start(t, cfg, db)
	r.env = []string{
		"DATABASE_URL=" + db.AppDSN,
		"ONCE_JWT_SECRET=" + cfg.JWTSecret,
		"ONCE_IDEMPOTENCY_SECRETS=" + cfg.IdempotencySecrets,
		"ONCE_CREDENTIAL_KEYS=" + cfg.CredentialKeys,
		"ONCE_QUEUE=" + app.QueueAMQP,
		"ONCE_AMQP_URL=" + cfg.AMQPURL,
		"ONCE_QUEUE_PREFIX=" + cfg.QueuePrefix,
		"ONCE_OBJECT_STORE=local",
		"ONCE_OBJECT_STORE_DIR=" + t.TempDir(),
		"ONCE_SIM_URL=http://" + r.simAddr,
		"ONCE_SIM_TIMEOUT=5s",
		// A simulator down for a moment must not spend a job's retries.
		"ONCE_WORKER_MAX_RETRIES=50",
		"ONCE_LOG_LEVEL=warn",
	}
	return r
}

func (r *crashRun) work() *process { return startOnce(r.t, r.env, "work") }

// killDuringHold holds the next external call that fault names, starts
// spare (a job that makes such a call), kills the worker that made the
// held call while it waits, then lets the simulator finish the call for
// nobody. It returns spare's task.
func (r *crashRun) killDuringHold(w *process, fault simhttp.Fault, spare jobStart) task {
	t := r.t
	ctx := context.Background()
	require.NoError(t, r.admin.Inject(ctx, fault))
	started := spare.start()
	var held []simhttp.HeldCall
	require.Eventually(t, func() bool {
		var err error
		held, err = r.admin.Held(ctx)
		require.NoError(t, err)
		return len(held) > 0
	}, time.Minute, 10*time.Millisecond, "a held %s call", fault.Kind)
	w.kill()
	t.Logf("killed during %s of %s %s", fault.Action, held[0].Kind, held[0].Token)
	_, err := r.admin.Release(ctx)
	require.NoError(t, err)
	return started
}

// waitCalls waits until the simulator's ledger grows: a worker is calling.
func (r *crashRun) waitCalls() {
	entries := func() int {
		entries, err := simhttp.ReadLedger(r.ledger)
		require.NoError(r.t, err)
		return len(entries)
	}
	before := entries()
	apitest.Eventually(r.t, time.Minute, "the worker calling the simulator", func() bool { return entries() > before })
}

func (r *crashRun) storeBody(shop string) map[string]any {
	return map[string]any{
		"platform": "shopify", "name": "Crash shop", "external_shop_id": shop + "-" + uuid.NewString()[:8],
		"credentials": map[string]any{"api_key": "ak_crash", "api_secret": "sk_crash_secret"},
	}
}

// start sends a request that starts a job and returns the task's id and
// its operation's id.
func (r *crashRun) start(path string, body any) (id, op uuid.UUID) {
	t := r.t
	res := r.api.Do(t, http.MethodPost, path, body, map[string]string{"Idempotency-Key": uuid.NewString()})
	require.Contains(t, []int{http.StatusAccepted, http.StatusCreated}, res.Status, "%s: %s", path, res.Body)
	var parts map[string]struct {
		ID uuid.UUID `json:"id"`
	}
	res.JSON(t, &parts)
	op = parts["operation"].ID
	delete(parts, "operation")
	for _, p := range parts {
		id = p.ID
	}
	return id, op
}

// startJobs starts 500 jobs: 100 store verifications, 100 publications,
// 50 catalog syncs, 150 AI tasks and 100 material transfers, from four
// clients at once.
func (r *crashRun) jobStarts(stores []uuid.UUID) []jobStart {
	t := r.t
	products := make([]uuid.UUID, 100)
	for i := range products {
		res := r.api.Do(t, http.MethodPost, "/v1/products", map[string]any{"title": fmt.Sprintf("Product %d", i), "price_minor": 1000 + i, "currency": "EUR"}, nil)
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		var p struct {
			ID uuid.UUID `json:"id"`
		}
		res.JSON(t, &p)
		products[i] = p.ID
	}
	var starts []jobStart
	for i := range 100 {
		starts = append(starts, jobStart{simhttp.KindVerify, func() task {
			_, op := r.start("/v1/stores", r.storeBody(fmt.Sprintf("new-%d", i)))
			return task{op: op, kind: simhttp.KindVerify, token: r.api.RequestToken(t, op)}
		}}, jobStart{simhttp.KindListing, func() task {
			_, op := r.start("/v1/products/"+products[i].String()+"/publications", map[string]any{"store_id": stores[i%len(stores)]})
			return task{op: op, kind: simhttp.KindListing, token: r.api.RequestToken(t, op)}
		}}, jobStart{simhttp.KindFetch, func() task {
			source := fmt.Sprintf("https://supplier.example/crash/%d.png", i)
			_, op := r.start("/v1/material-transfers", map[string]any{"source_urls": []string{source}})
			return task{op: op, kind: simhttp.KindFetch, subject: source}
		}})
		for k := range 1 + i%2 { // 150 AI tasks: one or two per product
			aiKind := []string{"text", "category", "image"}[(i+k)%3]
			starts = append(starts, jobStart{simhttp.KindGenerate, func() task {
				_, op := r.start("/v1/ai-tasks", map[string]any{"product_id": products[i], "kind": aiKind})
				return task{op: op, kind: simhttp.KindGenerate, token: r.api.RequestToken(t, op)}
			}})
		}
	}
	for i := range 50 {
		starts = append(starts, jobStart{simhttp.KindCatalog, func() task {
			_, op := r.start("/v1/stores/"+stores[i].String()+"/syncs", nil)
			return task{op: op, kind: simhttp.KindCatalog, subject: r.shopOf(stores[i])}
		}})
	}
	rand.Shuffle(len(starts), func(i, j int) { starts[i], starts[j] = starts[j], starts[i] })
	return starts
}

// jobStart starts one job whose external calls are of kind.
type jobStart struct {
	kind  simhttp.Kind
	start func() task
}

// takeStart removes the first start of kind from starts and returns it.
func takeStart(starts *[]jobStart, kind simhttp.Kind) jobStart {
	for i, s := range *starts {
		if s.kind == kind {
			*starts = append((*starts)[:i], (*starts)[i+1:]...)
			return s
		}
	}
	panic("no job of kind " + string(kind))
}

// runStarts starts the jobs four at a time and returns their tasks.
func runStarts(starts []jobStart) []task {
	out := make([]task, len(starts))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				out[i] = starts[i].start()
			}
		})
	}
	for i := range starts {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func (r *crashRun) shopOf(store uuid.UUID) string {
	res := r.api.Do(r.t, http.MethodGet, "/v1/stores/"+store.String(), nil, nil)
	require.Equal(r.t, http.StatusOK, res.Status, string(res.Body))
	var s struct {
		ExternalShopID string `json:"external_shop_id"`
	}
	res.JSON(r.t, &s)
	return s.ExternalShopID
}

// unfinished counts the workspace's operations not yet final.
func (r *crashRun) unfinished() int {
	var n int
	err := r.api.PG.App.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT set_config('app.workspace_id', ?, true)", r.api.Workspace.String()); err != nil {
			return err
		}
		return tx.NewSelect().Table("operations").ColumnExpr("count(*)").
			Where("status NOT IN ('succeeded', 'failed')").Scan(ctx, &n)
	})
	require.NoError(r.t, err)
	return n
}

// waitFinal waits until every operation is final, then checks the tasks'
// operations all succeeded.
func (r *crashRun) waitFinal(tasks []task, timeout time.Duration) {
	t := r.t
	apitest.Eventually(t, timeout, "every operation final", func() bool { return r.unfinished() == 0 })
	for _, task := range tasks {
		op := r.api.WaitOperation(t, task.op, time.Second)
		assert.Equal(t, "succeeded", op.Status, "%s %s: %s", task.kind, task.op, op.Error)
	}
}

// checkLedger: one effect per job that has one, at least one read per job
// that reads, and no effect the test did not ask for.
func (r *crashRun) checkLedger(tasks []task) {
	t := r.t
	entries, err := simhttp.ReadLedger(r.ledger)
	require.NoError(t, err)
	effects := 0
	for _, task := range tasks {
		if task.token != "" {
			effects++
			assert.Equal(t, 1, len(simhttp.Select(entries, simhttp.Filter{Token: task.token, EffectsOnly: true})),
				"effects of %s %s", task.kind, task.token)
			continue
		}
		assert.NotZero(t, len(simhttp.Select(entries, simhttp.Filter{Kind: task.kind, Subject: task.subject})),
			"reads of %s %s", task.kind, task.subject)
	}
	assert.Equal(t, effects, len(simhttp.Select(entries, simhttp.Filter{EffectsOnly: true})), "no effect beyond one per job")
	t.Logf("ledger: %d entries, %d effects for %d jobs", len(entries), effects, len(tasks))
}
