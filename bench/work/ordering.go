package work

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/bench/storm"
)

// orderingClaimIdle is how long a killed worker's messages stay its own
// before another worker (or its restart) claims them
// (ONCE_REDIS_CLAIM_IDLE): a kill every few seconds would otherwise hold
// its keys for the default's length each time.
const orderingClaimIdle = "5s"

// orderingRun is what one run of the ordering scenario measured.
type orderingRun struct {
	verdict     orderingVerdict
	jobs        int
	jobsPerSec  float64
	kills       int
	mostPerKey  int // most calls of one key the marketplace saw at once
	deadLetters int
}

// runOrdering publishes cfg.OrderingKeys products, each to one of
// cfg.OrderingStores stores, cfg.OrderingJobs times in all (several live
// per product and store: one ordering key each), with the relay and two
// `once dispatch` on, while one worker is killed -9 every cfg.KillEvery
// and started again; then holds the marketplace's calls per key against
// the outbox's commit order.
func runOrdering(ctx context.Context, r *runner, rep int) ([]figure, error) {
	run, err := r.ordering(ctx, fmt.Sprintf("ordering-%d", rep))
	if err != nil {
		return nil, err
	}
	v := run.verdict
	name := fmt.Sprintf("ordering, %d publications over %d keys, a worker killed -9 every %s", run.jobs, r.cfg.OrderingKeys, r.cfg.KillEvery)
	return []figure{
		{name, "calls out of commit order (a key's earlier job after a later one's call)", count, float64(v.outOfOrder), "0"},
		{name, "calls beside another job's call of their key", count, float64(v.overlaps), "0"},
		{name, "most calls of one key at once", count, float64(run.mostPerKey), "1"},
		{name, "jobs lost (not succeeded)", count, float64(v.lost), "0"},
		{name, "tokens the platform acted on twice", count, float64(v.duplicates), "0"},
		{name, "jobs succeeded without an effect", count, float64(v.unacted), "0"},
		{name, "calls beside a call of the same job (redelivery after a kill)", count, float64(v.sameJobOverlaps), ""},
		{name, "platform calls", count, float64(v.calls), fmt.Sprintf("≥ %d", run.jobs)},
		{name, "calls of a token no committed job carries", count, float64(v.unknown), "0"},
		{name, "workers killed -9", count, float64(run.kills), ""},
		{name, "dead letters", count, float64(run.deadLetters), "0"},
		{name, "jobs/s, first commit → last end", perSecond, run.jobsPerSec, ""},
	}, nil
}

func (r *runner) ordering(ctx context.Context, label string) (run orderingRun, err error) {
	shared := []string{"ONCE_REDIS_CLAIM_IDLE", orderingClaimIdle}
	err = r.inWith(ctx, label, r.latencyFlag(), shared, func(st *stack) error {
		if _, err := st.svc.StartNamed("dispatch2", "dispatch", st.env()...); err != nil {
			return err
		}
		if err := st.startWorkersReady(ctx, r.workers, 0); err != nil {
			return err
		}
		stores, err := r.orderingStores(ctx, st)
		if err != nil {
			return err
		}
		products := make([]string, r.cfg.OrderingKeys)
		if err := inParallel(ctx, len(products), func(ctx context.Context, i int) error {
			id, err := createProduct(ctx, st.api, i)
			products[i] = id
			return err
		}); err != nil {
			return err
		}
		run.jobs = r.cfg.OrderingJobs
		fmt.Fprintf(r.progress, "   %d stores, %d products; publishing %d times while killing a worker every %s\n",
			len(stores), len(products), run.jobs, r.cfg.KillEvery)
		created := make(chan error, 1)
		go func() {
			created <- inParallel(ctx, run.jobs, func(ctx context.Context, i int) error {
				k := i % len(products)
				return publish(ctx, st.api, products[k], stores[k%len(stores)])
			})
		}()
		if run.kills, err = r.killWhileWaiting(ctx, st, created, run.jobs); err != nil {
			return err
		}
		return r.readOrdering(ctx, st, products, stores, &run)
	})
	return run, err
}

// orderingStores connects cfg.OrderingStores shopify stores and waits
// for their verifications (a publish needs a verified store).
func (r *runner) orderingStores(ctx context.Context, st *stack) ([]string, error) {
	stores := make([]string, r.cfg.OrderingStores)
	err := inParallel(ctx, len(stores), func(ctx context.Context, i int) error {
		c, err := createStore(ctx, st.api, store{"shopify", fmt.Sprintf("o%d", i)})
		stores[i] = c.store
		return err
	})
	if err != nil {
		return nil, err
	}
	return stores, waitEnded(ctx, st, r.progress, r.cfg.Timeout, len(stores), "true")
}

// killWhileWaiting kills one worker -9 every cfg.KillEvery, in turn, and
// starts it again at once, until created said the publishes were all
// accepted and want publications have ended (or the timeout). It returns
// how many it killed.
func (r *runner) killWhileWaiting(ctx context.Context, st *stack, created chan error, want int) (int, error) {
	deadline := time.Now().Add(r.cfg.Timeout)
	kill := time.NewTicker(r.cfg.KillEvery)
	defer kill.Stop()
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	said, kills, accepted := time.Now(), 0, false
	for {
		select {
		case <-ctx.Done():
			return kills, ctx.Err()
		case err := <-created:
			if err != nil {
				return kills, err
			}
			accepted = true
		case <-kill.C:
			i := kills % len(st.workers)
			name := "work"
			if i > 0 {
				name = fmt.Sprintf("work%d", i+1)
			}
			st.workers[i].Kill()
			kills++
			if err := st.restartWork(i, 0, name); err != nil {
				return kills, err
			}
		case <-poll.C:
			var ended int
			if err := st.svc.Super().QueryRowContext(ctx,
				`SELECT count(*) FROM publications WHERE status IN ('succeeded', 'failed')`).Scan(&ended); err != nil {
				return kills, err
			}
			switch {
			case accepted && ended >= want:
				return kills, nil
			case time.Now().After(deadline):
				return kills, fmt.Errorf("%d of %d publications ended within %s", ended, want, r.cfg.Timeout)
			case time.Since(said) > progressEvery:
				fmt.Fprintf(r.progress, "   %d of %d publications ended, %d kills\n", ended, want, kills)
				said = time.Now()
			}
		}
	}
}

// readOrdering reads the outbox's commit order of the publications, the
// marketplace's calls of each key and its effects, and checks them.
func (r *runner) readOrdering(ctx context.Context, st *stack, products, stores []string, run *orderingRun) error {
	db := st.svc.Super()
	rows, err := db.QueryContext(ctx, `
		SELECT e.ordering_key, e.key_seq,
		       coalesce(nullif(e.event_payload->>'request_token', ''), e.event_payload->>'publication_id'),
		       p.status = 'succeeded'
		  FROM outbox_events e JOIN publications p ON p.id = (e.event_payload->>'publication_id')::uuid
		 WHERE e.event_type = 'listing.publish'`)
	if err != nil {
		return err
	}
	var jobs []keyedJob
	for rows.Next() {
		var j keyedJob
		if err := rows.Scan(&j.key, &j.seq, &j.token, &j.succeeded); err != nil {
			_ = rows.Close()
			return err
		}
		jobs = append(jobs, j)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(jobs) != run.jobs {
		return fmt.Errorf("%d publish events in the outbox, %d publications asked for", len(jobs), run.jobs)
	}
	if err := db.QueryRowContext(ctx, `SELECT extract(epoch FROM max(updated_at) - min(created_at)) FROM publications`).
		Scan(&run.jobsPerSec); err != nil {
		return err
	}
	run.jobsPerSec = ratio(float64(run.jobs), run.jobsPerSec)
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM outbox_events WHERE status = 'dead_letter'`).Scan(&run.deadLetters); err != nil {
		return err
	}
	calls, most, err := keyCalls(ctx, st.sim, products, stores)
	if err != nil {
		return err
	}
	run.mostPerKey = most
	entries, err := st.sim.Ledger(ctx, simhttp.Filter{Kind: simhttp.KindListing, EffectsOnly: true})
	if err != nil {
		return err
	}
	effects := map[string]int{}
	for _, e := range entries {
		effects[e.Token]++
	}
	run.verdict = checkOrdering(jobs, calls, effects)
	return nil
}

// keyCalls reads the marketplace's calls of every product's key (the
// product to its store), a few keys a request, and the most calls of one
// key it saw at once.
func keyCalls(ctx context.Context, sim *simhttp.Admin, products, stores []string) (map[string][]simcore.Span, int, error) {
	keys := make([]string, len(products))
	for k, p := range products {
		keys[k] = "publish/" + p + "/" + stores[k%len(stores)]
	}
	calls, most := map[string][]simcore.Span{}, 0
	for chunk := range slices.Chunk(keys, 40) {
		asked := make([]string, len(chunk))
		for i, k := range chunk {
			asked[i] = simhttp.InFlightOrdering(k)
		}
		in, err := sim.InFlight(ctx, asked...)
		if err != nil {
			return nil, 0, err
		}
		for i, k := range chunk {
			calls[k] = in.Calls[asked[i]]
			most = max(most, in.MaxInFlight[asked[i]])
		}
	}
	return calls, most, nil
}

// createProduct creates the product draft i and returns its id.
func createProduct(ctx context.Context, api *storm.API, i int) (string, error) {
	body := fmt.Appendf(nil, `{"title":"bench product %d","price_minor":1999,"currency":"EUR"}`, i)
	status, answer := postRetrying(ctx, api, "/v1/products", body)
	var created struct {
		ID string `json:"id"`
	}
	if status != 201 || json.Unmarshal(answer, &created) != nil || created.ID == "" {
		return "", fmt.Errorf("create product: %d %s", status, answer)
	}
	return created.ID, nil
}

// publish publishes product to store: one more job of their key.
func publish(ctx context.Context, api *storm.API, product, store string) error {
	status, answer := postRetrying(ctx, api, "/v1/products/"+product+"/publications", fmt.Appendf(nil, `{"store_id":%q}`, store))
	if status != 202 {
		return fmt.Errorf("publish %s to %s: %d %s", product, store, status, answer)
	}
	return nil
}
