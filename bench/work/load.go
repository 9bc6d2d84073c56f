package work

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/bench/storm"
)

const (
	storesPath = "/v1/stores"
	// loadConns is how many creates the bench keeps in flight when it
	// queues a backlog.
	loadConns = 32
)

// store is a shop to connect: each create is a store and its
// verification, one job calling the shop's platform.
type store struct{ platform, shop string }

// storeCreated is what connecting a store answered: the store's id and
// its verification's operation id.
type storeCreated struct{ store, operation string }

// createStore connects s and returns the store's id and its
// verification's operation.
func createStore(ctx context.Context, api *storm.API, s store) (storeCreated, error) {
	body := fmt.Appendf(nil, `{"platform":%q,"name":"bench %s","external_shop_id":%q,"credentials":{"api_key":"k","api_secret":"s"}}`,
		s.platform, s.shop, s.shop)
	status, answer := postRetrying(ctx, api, storesPath, body)
	if status != 201 && status != 202 {
		return storeCreated{}, fmt.Errorf("create store %s/%s: %d %s", s.platform, s.shop, status, answer)
	}
	var created struct {
		Store struct {
			ID string `json:"id"`
		} `json:"store"`
		Operation struct {
			ID string `json:"id"`
		} `json:"operation"`
	}
	if err := json.Unmarshal(answer, &created); err != nil {
		return storeCreated{}, fmt.Errorf("create store: %w: %s", err, answer)
	}
	return storeCreated{created.Store.ID, created.Operation.ID}, nil
}

// verifyStore asks for one more verification of the store id: one more
// job for its shop.
func verifyStore(ctx context.Context, api *storm.API, id string) error {
	status, answer := postRetrying(ctx, api, storesPath+"/"+id+"/verifications", nil)
	if status != 202 && status != 201 {
		return fmt.Errorf("verify store %s: %d %s", id, status, answer)
	}
	return nil
}

// retryFor bounds how long postRetrying sends one request again.
const retryFor = time.Minute

// postRetrying sends one request with a key of its own, again with the
// same key after no answer, a 503 or a 409 (in progress), as a
// well-behaved client does, for up to retryFor.
func postRetrying(ctx context.Context, api *storm.API, path string, body []byte) (int, []byte) {
	key := uuid.NewString()
	deadline := time.Now().Add(retryFor)
	for {
		status, answer := api.Post(ctx, path, key, body)
		if status != 0 && status != 503 && status != 409 || time.Now().After(deadline) || ctx.Err() != nil {
			return status, answer
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// inParallel runs job(i) for i in [0, n) on loadConns goroutines and
// returns the first error.
func inParallel(ctx context.Context, n int, job func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(loadConns, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := job(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// createStores connects n stores, shops(i) each, loadConns at a time.
func createStores(ctx context.Context, api *storm.API, n int, shops func(i int) store) error {
	return inParallel(ctx, n, func(ctx context.Context, i int) error {
		_, err := createStore(ctx, api, shops(i))
		return err
	})
}

// createStoresSteadily connects rate stores a second, shops(i) each, for
// d, each on its own goroutine, and returns how many it started.
func createStoresSteadily(ctx context.Context, api *storm.API, rate int, d time.Duration, shops func(i int) store) (int, error) {
	return createStoresSteadilyThen(ctx, api, rate, d, shops, nil)
}

// createStoresSteadilyThen is createStoresSteadily calling then (if not
// nil) with each store created, on the goroutine that created it.
func createStoresSteadilyThen(ctx context.Context, api *storm.API, rate int, d time.Duration, shops func(i int) store,
	then func(ctx context.Context, c storeCreated)) (int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.After(d)
	var wg sync.WaitGroup
	n := 0
loop:
	for ; ; n++ {
		s := shops(n)
		wg.Go(func() {
			c, err := createStore(ctx, api, s)
			if err != nil {
				cancel(err)
				return
			}
			if then != nil {
				then(ctx, c)
			}
		})
		select {
		case <-tick.C:
		case <-end:
			n++
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	wg.Wait()
	return n, context.Cause(ctx)
}
