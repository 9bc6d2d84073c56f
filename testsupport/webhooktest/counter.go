package webhooktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Counter is a webhook receiver in this process, as a user would write
// one in Go: the stock standardwebhooks Go library checks each request,
// and the receiver counts the deliveries it got by webhook-id, so a test
// can tell a lost delivery (an id never seen) from a repeated one (an id
// seen twice, which receivers dedupe). It can be made to fail: answer an
// error status, or hang, for the tests of outages and of isolation.
//
// A delivery counts as received once it verifies, before the receiver
// answers, as a receiver that acts on it and then dies before its answer
// would.
type Counter struct {
	// URL is where it listens (http://127.0.0.1:port/hook).
	URL string

	mu       sync.Mutex
	wh       *standardwebhooks.Webhook
	status   int           // the answer while failing (0: 204 when it verifies)
	hang     chan struct{} // while non-nil, requests wait until it is closed
	received map[string]int
	invalid  int
	refused  int // requests answered with status
	open     int // requests hanging now
	maxOpen  int
	answered int // deliveries answered 2xx
}

// NewCounter starts a receiver; it trusts no secret until Trust. It stops
// with the test, letting any hanging request go first.
func NewCounter(t testing.TB) *Counter {
	t.Helper()
	c := &Counter{received: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(func() {
		c.Answer()
		srv.Close()
	})
	c.URL = srv.URL + "/hook"
	return c
}

// Trust makes the receiver verify with secret (whsec_...).
func (c *Counter) Trust(t testing.TB, secret string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("webhook secret: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wh = wh
}

// Fail makes the receiver answer every request with status, without
// reading it, as a receiver that is down behind its load balancer.
func (c *Counter) Fail(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = status
}

// Hang makes every request that verifies wait for Answer (or for the
// sender to give up) before it is answered.
func (c *Counter) Hang() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hang == nil {
		c.hang = make(chan struct{})
	}
}

// Answer ends Fail and Hang: the requests hanging are answered, and every
// request from now on is answered at once.
func (c *Counter) Answer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = 0
	if c.hang != nil {
		close(c.hang)
		c.hang = nil
	}
}

// CounterState is what a Counter saw so far.
type CounterState struct {
	// Received counts the deliveries that verified, by webhook-id.
	Received map[string]int
	// Invalid counts the requests that did not verify.
	Invalid int
	// Refused counts the requests answered with Fail's status.
	Refused int
	// Open is how many requests hang now, MaxOpen the most at once.
	Open, MaxOpen int
	// Answered counts the deliveries answered 2xx.
	Answered int
}

// Repeated counts the deliveries received again under a webhook-id
// received before.
func (s CounterState) Repeated() int {
	n := 0
	for _, times := range s.Received {
		n += times - 1
	}
	return n
}

// State is what the receiver saw so far.
func (c *Counter) State() CounterState {
	c.mu.Lock()
	defer c.mu.Unlock()
	received := make(map[string]int, len(c.received))
	for id, n := range c.received {
		received[id] = n
	}
	return CounterState{Received: received, Invalid: c.invalid, Refused: c.refused, Open: c.open, MaxOpen: c.maxOpen, Answered: c.answered}
}

func (c *Counter) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	status, wh := c.status, c.wh
	if status != 0 {
		c.refused++
	}
	c.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err == nil && wh != nil {
		err = wh.Verify(body, r.Header)
	}
	if err != nil || wh == nil {
		c.mu.Lock()
		c.invalid++
		c.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.received[r.Header.Get("webhook-id")]++
	hang := c.hang
	if hang != nil {
		c.open++
		c.maxOpen = max(c.maxOpen, c.open)
	}
	c.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done(): // the sender gave up (its timeout, or its death)
		}
		c.mu.Lock()
		c.open--
		c.mu.Unlock()
		if r.Context().Err() != nil {
			return
		}
	}
	c.mu.Lock()
	c.answered++
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
