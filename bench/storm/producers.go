package storm

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

const (
	// retryPause is how long a producer waits before sending a failed
	// request again when the answer named no Retry-After.
	retryPause = 250 * time.Millisecond
	// maxInFlight bounds the logical requests retrying at once; past it the
	// rate drops rather than the bench piling up goroutines.
	maxInFlight = 512
	// storesPath is what the producers call: a store connection, one outbox
	// event and one operation each, and a job for the worker.
	storesPath = "/v1/stores"
)

// producers start logical requests (one store each) at a steady rate. Each
// is retried with its own key until it is accepted, as a well-behaved client
// does: after no answer, a 5xx or 409 (in progress) it waits (Retry-After,
// or retryPause) and sends the same request again; any other 4xx ends it as
// refused.
type producers struct {
	api   *client
	runID string

	answers  tally
	started  atomic.Int64
	accepted atomic.Int64
	refused  atomic.Int64

	mu         sync.Mutex
	acceptedAt []time.Time

	stopStarting chan struct{}
	finishing    sync.Once
	giveUp       context.CancelFunc
	retryCtx     context.Context
	loop         sync.WaitGroup
	inFlight     sync.WaitGroup
}

// startProducers starts rate logical requests a second until finish.
func startProducers(api *client, rate int) *producers {
	p := &producers{api: api, runID: uuid.NewString()[:8], stopStarting: make(chan struct{})}
	p.retryCtx, p.giveUp = context.WithCancel(context.Background())
	sem := make(chan struct{}, maxInFlight)
	p.loop.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for seq := 0; ; seq++ {
			select {
			case <-p.stopStarting:
				return
			case sem <- struct{}{}:
			}
			p.started.Add(1)
			p.inFlight.Go(func() {
				defer func() { <-sem }()
				p.logical(seq)
			})
			select {
			case <-p.stopStarting:
				return
			case <-tick.C:
			}
		}
	})
	return p
}

// logical sends one request until it is accepted, refused, or given up.
func (p *producers) logical(seq int) {
	key := uuid.NewString()
	body := fmt.Appendf(nil, `{"platform":"shopify","name":"storm %d","external_shop_id":"storm-%s-%d",`+
		`"credentials":{"api_key":"k","api_secret":"s"}}`, seq, p.runID, seq)
	for {
		a := p.api.post(p.retryCtx, storesPath, key, body)
		if p.retryCtx.Err() != nil {
			return // given up: this attempt was cut by the bench, not answered
		}
		p.answers.add(a)
		switch {
		case a.accepted():
			p.accepted.Add(1)
			p.mu.Lock()
			p.acceptedAt = append(p.acceptedAt, a.at)
			p.mu.Unlock()
			return
		case a.status == 0 || a.status >= 500 || a.status == 409:
			wait := retryPause
			if a.retryAfter > 0 {
				wait = a.retryAfter
			}
			select {
			case <-p.retryCtx.Done():
				return
			case <-time.After(wait):
			}
		default:
			p.refused.Add(1)
			return
		}
	}
}

// finish stops starting requests, lets those in flight retry for up to
// grace, then gives up on the rest. Only the first call does anything.
func (p *producers) finish(grace time.Duration) {
	p.finishing.Do(func() { p.finish1(grace) })
}

func (p *producers) finish1(grace time.Duration) {
	close(p.stopStarting)
	p.loop.Wait()
	done := make(chan struct{})
	go func() { p.inFlight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		p.giveUp()
		<-done
	}
	p.giveUp()
}

// firstAcceptedAfter is when the first request accepted after t was
// answered, and false if none was.
func (p *producers) firstAcceptedAfter(t time.Time) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first time.Time
	for _, at := range p.acceptedAt {
		if at.After(t) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first, !first.IsZero()
}

// figures are the producers' counts once finished.
type producerFigures struct {
	Requests, Accepted, Refused int
	Answers                     map[int]int
	Latency                     latencies
}

// GaveUp are the logical requests neither accepted nor refused: still
// failing when the bench stopped retrying.
func (f producerFigures) GaveUp() int { return f.Requests - f.Accepted - f.Refused }

func (p *producers) figures() producerFigures {
	return producerFigures{
		Requests: int(p.started.Load()), Accepted: int(p.accepted.Load()), Refused: int(p.refused.Load()),
		Answers: p.answers.counts(), Latency: p.answers.latency(),
	}
}
