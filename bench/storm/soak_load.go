package storm

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// soakLoad sends store creates (each a new key: a business write with an
// outbox event and a job) at a fixed rate, and keeps the answers of the
// current window, which sample hands over and resets.
type soakLoad struct {
	api   *client
	runID string

	mu        sync.Mutex
	latencies []time.Duration
	failed    map[int]int // by status, 0: no answer
	seq       atomic.Int64
	// acceptedTotal counts every create answered 2xx, for the end check.
	acceptedTotal atomic.Int64
}

func newSoakLoad(api *client) *soakLoad {
	return &soakLoad{api: api, runID: uuid.NewString()[:8]}
}

// one sends one create and records its answer.
func (l *soakLoad) one(ctx context.Context) bool {
	seq := l.seq.Add(1)
	body := fmt.Appendf(nil, `{"platform":"shopify","name":"soak %d","external_shop_id":"soak-%s-%d",`+
		`"credentials":{"api_key":"k","api_secret":"s"}}`, seq, l.runID, seq)
	a := l.api.post(ctx, storesPath, uuid.NewString(), body)
	if ctx.Err() != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !a.accepted() {
		if l.failed == nil {
			l.failed = map[int]int{}
		}
		l.failed[a.status]++
		return false
	}
	l.latencies = append(l.latencies, a.latency)
	l.acceptedTotal.Add(1)
	return true
}

// window is what was answered since the last call: accepted creates,
// failures by status and the p99 latency of the accepted ones.
func (l *soakLoad) window() (accepted int, failed map[int]int, p99 time.Duration) {
	l.mu.Lock()
	lat, f := l.latencies, l.failed
	l.latencies, l.failed = nil, nil
	l.mu.Unlock()
	slices.Sort(lat)
	if len(lat) > 0 {
		p99 = percentile(lat, 0.99)
	}
	return len(lat), f, p99
}

// capacity is how many creates a second the service accepts when clients
// send as fast as it answers (conns requests in flight), over d.
func (l *soakLoad) capacity(ctx context.Context, conns int, d time.Duration) float64 {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				if l.one(ctx) {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	l.window() // the calibration is not a row of the table
	return float64(ok.Load()) / d.Seconds()
}

// run sends rate creates a second until ctx ends, each on its own
// goroutine (bounded: past maxInFlight the rate drops rather than the
// bench piling up requests).
func (l *soakLoad) run(ctx context.Context, rate float64) {
	sem := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	onEveryTick(ctx, time.Duration(float64(time.Second)/rate), func() bool {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		wg.Go(func() {
			defer func() { <-sem }()
			l.one(ctx)
		})
		return true
	})
}
