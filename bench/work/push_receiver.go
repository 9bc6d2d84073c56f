package work

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// receiver is a webhook receiver as a customer writes one: it verifies
// each delivery with the Standard Webhooks library, acknowledges it at
// once, and dedupes on webhook-id. It keeps, per webhook-id, when it first
// arrived and how long after the operation's end (the event's timestamp,
// the end's updated_at, set inside the transaction that commits it: so the
// figure is commit→receipt plus the commit itself, never less).
type receiver struct {
	URL  string
	srv  *http.Server
	down atomic.Bool // answer 503 without reading

	mu       sync.Mutex
	verifier *standardwebhooks.Webhook
	first    map[string]receipt // webhook-id → its first receipt
	repeats  int                // deliveries of a webhook-id seen before
	rejected int                // deliveries that failed verification
}

// startReceiver listens on a free loopback port.
func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &receiver{URL: "http://" + ln.Addr().String() + "/hook", first: map[string]receipt{}}
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

func (rc *receiver) close() { _ = rc.srv.Close() }

// trust sets the endpoint's signing secret (known once it is created).
func (rc *receiver) trust(secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	rc.mu.Lock()
	rc.verifier = wh
	rc.mu.Unlock()
	return nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	if rc.down.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var event struct {
		Timestamp time.Time `json:"timestamp"`
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.verifier == nil || rc.verifier.Verify(body, r.Header) != nil || json.Unmarshal(body, &event) != nil {
		rc.rejected++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id := r.Header.Get(standardwebhooks.HeaderWebhookID)
	if _, seen := rc.first[id]; seen {
		rc.repeats++
	} else {
		rc.first[id] = receipt{ended: event.Timestamp, at: at}
	}
	w.WriteHeader(http.StatusNoContent)
}

// receipt is when a delivery first arrived, and when its operation ended
// (the event's timestamp).
type receipt struct{ ended, at time.Time }

// received is what the receiver has seen so far.
type received struct {
	distinct, repeats, rejected int
	receipts                    []receipt
}

func (rc *receiver) received() received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := received{distinct: len(rc.first), repeats: rc.repeats, rejected: rc.rejected}
	for _, r := range rc.first {
		out.receipts = append(out.receipts, r)
	}
	return out
}

// latencies are the receipts' end→receipt times.
func (r received) latencies() []time.Duration {
	out := make([]time.Duration, len(r.receipts))
	for i, rc := range r.receipts {
		out[i] = rc.at.Sub(rc.ended)
	}
	return out
}

// lastOfEndedBefore is the last receipt of an operation that ended before
// t: when the backlog of an outage that ended at t was delivered, whatever
// ended after it (the load goes on) aside.
func (r received) lastOfEndedBefore(t time.Time) time.Time {
	var last time.Time
	for _, rc := range r.receipts {
		if rc.ended.Before(t) && rc.at.After(last) {
			last = rc.at
		}
	}
	return last
}
