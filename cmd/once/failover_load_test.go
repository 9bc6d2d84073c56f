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
	"time"

	"github.com/google/uuid"
)

// createLoad sends store creates as a client of the API does when it uses
// the SDK: each create has its own Idempotency-Key, and an answer 5xx, 409
// IDEMPOTENCY_REQUEST_IN_PROGRESS or no answer at all is retried with the
// same key (after Retry-After, if given) until a 2xx. Any other answer is a
// failure of the test.
type createLoad struct {
	api, token string
	client     *http.Client
	// pause is each sender's rest between two creates.
	pause time.Duration

	mu      sync.Mutex
	creates []*create
	// statuses counts every answer by status (0: no answer).
	statuses map[int]int
	failures []string
	// refused is when each 5xx answer (or no answer) came: the clients
	// seeing an outage (a 429 is the workspace's rate, not one).
	refused []time.Time

	acked atomic.Int64
	stop  chan struct{}
	wg    sync.WaitGroup
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

func newCreateLoad(api, token string, pause time.Duration) *createLoad {
	return &createLoad{
		api: api, token: token, pause: pause,
		client:   &http.Client{Timeout: 10 * time.Second},
		statuses: map[int]int{}, stop: make(chan struct{}),
	}
}

// start runs senders until stop.
func (l *createLoad) start(senders int) {
	for s := range senders {
		l.wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				c := newCreate(fmt.Sprintf("fo-%d-%d-%s", s, n, uuid.NewString()[:6]))
				l.mu.Lock()
				l.creates = append(l.creates, c)
				l.mu.Unlock()
				l.send(c, l.stop)
				select {
				case <-l.stop:
					return
				case <-time.After(l.pause):
				}
			}
		})
	}
}

// halt stops the senders; a create being retried is given up on
// unacknowledged (it was never answered 2xx: nothing is owed to it).
func (l *createLoad) halt() {
	close(l.stop)
	l.wg.Wait()
}

func newCreate(shop string) *create {
	body, _ := json.Marshal(map[string]any{
		"platform": "shopify", "name": "Failover shop", "external_shop_id": shop,
		"credentials": map[string]any{"api_key": "ak_failover", "api_secret": "sk_failover_secret"},
	})
	return &create{key: uuid.New(), shop: shop, body: body}
}

// send sends c until it is acknowledged or stop closes.
func (l *createLoad) send(c *create, stop <-chan struct{}) {
	for {
		res, err := l.post(c)
		l.mu.Lock()
		c.attempts++
		status := 0
		if err == nil {
			status = res.status
		}
		l.statuses[status]++
		if status == 0 || status >= 500 {
			l.refused = append(l.refused, time.Now())
		}
		l.mu.Unlock()
		if err == nil && res.status >= 200 && res.status < 300 {
			l.mu.Lock()
			if !c.acked {
				c.acked, c.ackedAt, c.store, c.op = true, time.Now(), res.store, res.op
			}
			l.mu.Unlock()
			l.acked.Add(1)
			return
		}
		wait := 100 * time.Millisecond
		if err == nil {
			if !res.retry {
				l.mu.Lock()
				l.failures = append(l.failures, fmt.Sprintf("%s: %d %s", c.shop, res.status, res.body))
				l.mu.Unlock()
				return
			}
			wait = max(wait, res.retryAfter)
		}
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
	}
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
