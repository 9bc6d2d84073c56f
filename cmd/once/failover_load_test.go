package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"

	once "github.com/oncehq/once/sdk/go"
)

// createLoad sends store creates through the Go SDK as a client of the API
// does: each create is one once.IdempotentWithKey call, its own
// Idempotency-Key sent again on every retry, which the SDK makes on a 5xx,
// 429, 409 IDEMPOTENCY_REQUEST_IN_PROGRESS or no answer at all (after
// Retry-After, if given) until its deadline. A create that ends without a
// 201 is a failure of the test, unless the load was halted under it.
type createLoad struct {
	api, token string
	// client sends the test's own single attempts (post).
	client *http.Client
	// sdk is the load's client; every attempt it sends passes through
	// attempts, which counts the answers.
	sdk    *once.Client
	policy once.RetryPolicy
	// pace starts creates at most at the load's rate, across senders.
	pace *rate.Limiter

	mu      sync.Mutex
	creates []*create
	// statuses counts every attempt's answer by status (0: no answer).
	statuses map[int]int
	failures []string
	// refused is when each 5xx answer (or no answer) came: the clients
	// seeing an outage (a 429 is the workspace's rate, not one).
	refused []time.Time

	acked  atomic.Int64
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// create is one logical create: its key and body, and the first 2xx
// answer, once there is one.
type create struct {
	key  uuid.UUID
	shop string
	body []byte

	acked    bool
	ackedAt  time.Time
	store    uuid.UUID
	op       uuid.UUID
	attempts int
}

// newCreateLoad is a load of perSecond creates a second at most (fewer if
// its senders are all waiting for answers).
func newCreateLoad(t testing.TB, api, token string, perSecond float64) *createLoad {
	l := &createLoad{
		api: api, token: token,
		client:   &http.Client{Timeout: 10 * time.Second},
		statuses: map[int]int{},
		pace:     rate.NewLimiter(rate.Limit(perSecond), 1),
		// A failover's outage lasts up to the leader key's ttl and an
		// election (15 s seen): the SDK's default 30 s deadline would
		// do, but a create started in a burst of 429s after it must
		// not give up either. Backoff up to 1 s, not 5: the seconds to
		// the first 201 after a fault measure the database, not the
		// clients' backoff.
		policy: once.RetryPolicy{MaxElapsed: 2 * time.Minute, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second},
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 128 // every sender keeps its connection
	sdk, err := once.NewClient(api, once.WithBearerToken(token), once.WithHTTPClient(&http.Client{
		Timeout:   10 * time.Second,
		Transport: &attemptRecorder{load: l, next: transport},
	}))
	if err != nil {
		t.Fatal(err)
	}
	l.sdk = sdk
	return l
}

// attemptRecorder counts the answer to every attempt the SDK sends, and
// when each 5xx or lost answer came.
type attemptRecorder struct {
	load *createLoad
	next http.RoundTripper
}

func (r *attemptRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.next.RoundTrip(req)
	status := 0
	if err == nil {
		status = res.StatusCode
	}
	if errors.Is(err, context.Canceled) {
		return res, err // the load halted under it: no answer was due
	}
	l := r.load
	l.mu.Lock()
	l.statuses[status]++
	if status == 0 || status >= 500 {
		l.refused = append(l.refused, time.Now())
	}
	l.mu.Unlock()
	return res, err
}

// start runs senders until halt.
func (l *createLoad) start(senders int) {
	for s := range senders {
		l.wg.Go(func() {
			for n := 0; ; n++ {
				if l.pace.Wait(l.ctx) != nil {
					return
				}
				c := newCreate(fmt.Sprintf("fo-%d-%d-%s", s, n, uuid.NewString()[:6]))
				l.mu.Lock()
				l.creates = append(l.creates, c)
				l.mu.Unlock()
				l.send(c)
			}
		})
	}
}

// halt stops the senders; a create being retried is given up on
// unacknowledged (it was never answered 2xx: nothing is owed to it).
func (l *createLoad) halt() {
	l.cancel()
	l.wg.Wait()
}

func newCreate(shop string) *create {
	body, _ := json.Marshal(map[string]any{
		"platform": "shopify", "name": "Failover shop", "external_shop_id": shop,
		"credentials": map[string]any{"api_key": "ak_failover", "api_secret": "sk_failover_secret"},
	})
	return &create{key: uuid.New(), shop: shop, body: body}
}

// send makes c one logical call of the SDK, which retries it with c's key
// until a 201, a final answer, its deadline or halt.
func (l *createLoad) send(c *create) {
	res, err := once.IdempotentWithKey(l.ctx, c.key.String(), l.policy,
		func(ctx context.Context, key string) (*http.Response, error) {
			l.mu.Lock()
			c.attempts++
			l.mu.Unlock()
			return l.sdk.CreateStore(ctx, &once.CreateStoreParams{IdempotencyKey: key},
				c.request())
		}, once.ParseCreateStoreResponse)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil && res.JSON201 != nil:
		if c.store = res.JSON201.Store.Id; c.store == uuid.Nil {
			l.failures = append(l.failures, fmt.Sprintf("%s: a 201 without a store: %s", c.shop, res.Body))
			return
		}
		c.acked, c.ackedAt, c.op = true, time.Now(), res.JSON201.Operation.Id
		l.acked.Add(1)
	case l.ctx.Err() != nil:
		// Halted while retrying: never answered 2xx, nothing owed.
	case err != nil:
		l.failures = append(l.failures, fmt.Sprintf("%s: %d attempts, then %v", c.shop, c.attempts, err))
	default:
		l.failures = append(l.failures, fmt.Sprintf("%s: %d attempts, then %d %s", c.shop, c.attempts, res.StatusCode(), res.Body))
	}
}

// request is c's body as the SDK's type.
func (c *create) request() once.CreateStoreRequest {
	var r once.CreateStoreRequest
	if err := json.Unmarshal(c.body, &r); err != nil {
		panic(err) // newCreate made it
	}
	return r
}

// answer is one response to a create.
type answer struct {
	status     int
	body       string
	replayed   bool
	retry      bool
	retryAfter time.Duration
	store, op  uuid.UUID
}

// post sends c once.
func (l *createLoad) post(c *create) (answer, error) {
	req, err := http.NewRequest(http.MethodPost, l.api+"/v1/stores", bytes.NewReader(c.body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", c.key.String())
	res, err := l.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: res.StatusCode, body: string(raw), replayed: res.Header.Get("Idempotent-Replayed") == "true"}
	if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
		a.retryAfter = time.Duration(secs) * time.Second
	}
	var problem struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(raw, &problem)
	// RATE_LIMITED: the clients' retries after an outage come in a burst
	// over the workspace's rate; the SDKs retry it with the same key too.
	a.retry = res.StatusCode >= 500 || problem.Code == "IDEMPOTENCY_REQUEST_IN_PROGRESS" || problem.Code == "RATE_LIMITED"
	if res.StatusCode == http.StatusCreated {
		var created struct {
			Store, Operation struct {
				ID uuid.UUID `json:"id"`
			}
		}
		if err := json.Unmarshal(raw, &created); err != nil || created.Store.ID == uuid.Nil {
			return a, errors.Join(err, fmt.Errorf("a 201 without a store: %s", raw))
		}
		a.store, a.op = created.Store.ID, created.Operation.ID
	}
	return a, nil
}

// acknowledged is every create answered 2xx.
func (l *createLoad) acknowledged() []*create {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*create
	for _, c := range l.creates {
		if c.acked {
			out = append(out, c)
		}
	}
	return out
}

// waitAcked waits until n more creates are acknowledged than when it was
// called, or ctx ends.
func (l *createLoad) waitAcked(ctx context.Context, n int64) error {
	target := l.acked.Load() + n
	for l.acked.Load() < target {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d creates acknowledged of %d awaited: %w", l.acked.Load(), target, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// unanswered waits until n more attempts went without a 2xx than when it
// was called: the clients see the outage.
func (l *createLoad) waitRefused(ctx context.Context, n int) error {
	count := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		refused := 0
		for status, k := range l.statuses {
			if status < 200 || status >= 300 {
				refused += k
			}
		}
		return refused
	}
	target := count() + n
	for count() < target {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the clients saw no outage: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
