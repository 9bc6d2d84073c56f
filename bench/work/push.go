package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/bench/storm"
)

// pushEnv lets the processes reach the bench's receiver on loopback,
// which the fetch policy refuses by default.
var pushEnv = []string{"ONCE_FETCH_ALLOW_CIDRS", "127.0.0.0/8"}

// pushRun is what one run of a push scenario measured, in seconds.
type pushRun struct {
	ended                      int
	got                        received
	webhook, waited, polled    latency
	webhookMax, waitedMax      float64
	tooManyWaiters             int
	deadLetters, attemptsSpent int
	backToLast                 time.Duration
}

// runPush: operations end at a steady rate; each end is learnt three
// ways at once: a signed webhook to the bench's receiver, a ?wait= read
// on a second serve (not the one that created it), and a read every
// second (the peer: what a client did before either existed).
func runPush(ctx context.Context, r *runner, rep int) ([]figure, error) {
	run, err := r.push(ctx, fmt.Sprintf("push-%d", rep), false)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("push, %d operations/s", r.cfg.PushRate)
	ms := func(s float64) float64 { return s * 1000 }
	return []figure{
		{name, "operations ended", count, float64(run.ended), ""},
		{name, "webhooks received (distinct webhook-id)", count, float64(run.got.distinct), "all"},
		{name, "webhooks failing verification", count, float64(run.got.rejected), "0"},
		{name, "webhook end→receipt p50", millis, ms(run.webhook.p50), ""},
		{name, "webhook end→receipt p99", millis, ms(run.webhook.p99), "≤ 100 ms"},
		{name, "webhook end→receipt max", millis, ms(run.webhookMax), ""},
		{name, "?wait= on the other serve, end→answer p50", millis, ms(run.waited.p50), ""},
		{name, "?wait= on the other serve, end→answer p99", millis, ms(run.waited.p99), "≤ 50 ms"},
		{name, "?wait= on the other serve, end→answer max", millis, ms(run.waitedMax), ""},
		{name, "?wait= answered 429 TOO_MANY_WAITERS", count, float64(run.tooManyWaiters), "0"},
		{name, "peer: a read each second, end→answer p50", millis, ms(run.polled.p50), ""},
		{name, "peer: a read each second, end→answer p99", millis, ms(run.polled.p99), ""},
		{name, "webhook p99 ÷ peer p99", times, ratio(run.webhook.p99, run.polled.p99), ""},
		{name, "?wait= p99 ÷ peer p99", times, ratio(run.waited.p99, run.polled.p99), ""},
	}, nil
}

// runPushOutage: the same load with the receiver answering 503 for
// cfg.ReceiverDown in the middle; every delivery must arrive after it is
// back, none dead-lettered, no attempt spent.
func runPushOutage(ctx context.Context, r *runner, rep int) ([]figure, error) {
	run, err := r.push(ctx, fmt.Sprintf("push-outage-%d", rep), true)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("push, receiver down %s", r.cfg.ReceiverDown)
	return []figure{
		{name, "operations ended", count, float64(run.ended), ""},
		{name, "webhooks received (distinct webhook-id)", count, float64(run.got.distinct), "all"},
		{name, "webhooks received again (same webhook-id)", count, float64(run.got.repeats), ""},
		{name, "webhooks failing verification", count, float64(run.got.rejected), "0"},
		{name, "deliveries dead-lettered", count, float64(run.deadLetters), "0"},
		{name, "delivery attempts spent (sum, job_attempts)", count, float64(run.attemptsSpent), "0"},
		{name, "receiver back → last delivery of an operation ended before", seconds, run.backToLast.Seconds(), ""},
	}, nil
}

// push runs one push scenario on a fresh stack: a second serve for the
// waiting reads, the worker, an endpoint subscribed to every operation's
// end, then stores created at cfg.PushRate for cfg.PushFor (and, when
// down, the receiver down for cfg.ReceiverDown from the middle of it),
// until every end was learnt all three ways.
func (r *runner) push(ctx context.Context, label string, down bool) (run pushRun, err error) {
	err = r.inWith(ctx, label, r.latencyFlag(), pushEnv, func(st *stack) error {
		rc, err := startReceiver()
		if err != nil {
			return err
		}
		defer rc.close()
		if err := subscribe(ctx, st.api, rc); err != nil {
			return err
		}
		other, err := st.svc.StartAnotherServe(ctx, "serve-b", apiConns, st.env("ONCE_DISPATCHER", "false", "ONCE_WORKER", "false")...)
		if err != nil {
			return err
		}
		if err := st.startWorkReady(ctx, 0); err != nil {
			return err
		}
		var back time.Time
		if down {
			back, err = r.loadWithReceiverDown(ctx, st, other, rc, &run)
		} else {
			err = r.pushLoad(ctx, st, other, r.cfg.PushFor, &run)
		}
		if err != nil {
			return err
		}
		if err := waitReceived(ctx, rc, run.ended, r.cfg.Timeout); err != nil {
			return err
		}
		run.got = rc.received()
		run.webhook, run.webhookMax = secondsOf(run.got.latencies())
		if !back.IsZero() {
			run.backToLast = run.got.lastOfEndedBefore(back).Sub(back)
		}
		a, err := attemptsOf(ctx, st.svc.Super(), "webhook/%")
		run.deadLetters, run.attemptsSpent = a.deadLetters, a.jobSum
		return err
	})
	return run, err
}

// loadWithReceiverDown runs pushLoad for cfg.PushFor + cfg.ReceiverDown
// with the receiver down for cfg.ReceiverDown from half of cfg.PushFor
// on (operations end before, during and after), and returns when it came
// back.
func (r *runner) loadWithReceiverDown(ctx context.Context, st *stack, other *storm.API, rc *receiver, run *pushRun) (time.Time, error) {
	loaded := make(chan error, 1)
	go func() { loaded <- r.pushLoad(ctx, st, other, r.cfg.PushFor+r.cfg.ReceiverDown, run) }()
	var back time.Time
	select {
	case <-ctx.Done():
	case <-time.After(r.cfg.PushFor / 2):
		rc.down.Store(true)
		fmt.Fprintf(r.progress, "   receiver down for %s\n", r.cfg.ReceiverDown)
		select {
		case <-ctx.Done():
		case <-time.After(r.cfg.ReceiverDown):
		}
		rc.down.Store(false)
		back = time.Now()
	}
	return back, errors.Join(<-loaded, ctx.Err())
}

// subscribe creates the endpoint of rc for every operation's end and
// gives rc its secret.
func subscribe(ctx context.Context, api *storm.API, rc *receiver) error {
	body := fmt.Appendf(nil, `{"url":%q,"event_types":["operation.succeeded","operation.failed","operation.cancelled"]}`, rc.URL)
	status, answer := api.Post(ctx, "/v1/webhook-endpoints", uuid.NewString(), body)
	if status != 201 {
		return fmt.Errorf("create the webhook endpoint: %d %s", status, answer)
	}
	var created struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(answer, &created); err != nil {
		return err
	}
	return rc.trust(created.Secret)
}

// pushLoad creates stores steadily for d; for each, one reader waits
// with ?wait= on other and one reads every second on the first serve,
// until its verification ended.
func (r *runner) pushLoad(ctx context.Context, st *stack, other *storm.API, d time.Duration, run *pushRun) error {
	var mu sync.Mutex
	var waited, polled []float64
	var readers sync.WaitGroup
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	learn := func(read func(context.Context, *storm.API, string) (time.Duration, int, error), api *storm.API, id string, into *[]float64) {
		d, refused, err := read(ctx, api, id)
		if err != nil {
			cancel(err)
			return
		}
		mu.Lock()
		*into = append(*into, d.Seconds())
		run.tooManyWaiters += refused
		mu.Unlock()
	}
	n, err := createStoresSteadilyThen(ctx, st.api, r.cfg.PushRate, d,
		func(i int) store { return store{"shopify", fmt.Sprintf("p%d", i)} },
		func(ctx context.Context, c storeCreated) {
			readers.Go(func() { learn(waitEnd, other, c.operation, &waited) })
			readers.Go(func() { learn(pollEnd, st.api, c.operation, &polled) })
		})
	readers.Wait()
	if err == nil {
		err = context.Cause(ctx)
	}
	fmt.Fprintf(r.progress, "   %d operations ended\n", n)
	run.ended = n
	run.waited, run.waitedMax = secondsOfFloats(waited)
	run.polled, _ = secondsOfFloats(polled)
	return err
}

// operationState is what a read of an operation says of its end.
type operationState struct {
	Status    string    `json:"status"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (o operationState) ended() bool {
	return o.Status == "succeeded" || o.Status == "failed" || o.Status == "cancelled"
}

// waitEnd reads the operation with ?wait= until it ended and returns how
// long after its end the answer came, and how many reads were refused
// with 429.
func waitEnd(ctx context.Context, api *storm.API, id string) (time.Duration, int, error) {
	refused := 0
	for {
		status, body := api.Get(ctx, "/v1/operations/"+id+"?wait=25s")
		at := time.Now()
		switch {
		case status == 429:
			refused++
			time.Sleep(100 * time.Millisecond)
			continue
		case status != 200:
			return 0, refused, fmt.Errorf("GET operation %s?wait=: %d %s", id, status, body)
		}
		var op operationState
		if err := json.Unmarshal(body, &op); err != nil {
			return 0, refused, err
		}
		if op.ended() {
			return at.Sub(op.UpdatedAt), refused, nil
		}
	}
}

// pollEnd reads the operation every second, from its creation, until it
// ended, as a client without push or ?wait= does.
func pollEnd(ctx context.Context, api *storm.API, id string) (time.Duration, int, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-tick.C:
		}
		status, body := api.Get(ctx, "/v1/operations/"+id)
		at := time.Now()
		if status != 200 {
			return 0, 0, fmt.Errorf("GET operation %s: %d %s", id, status, body)
		}
		var op operationState
		if err := json.Unmarshal(body, &op); err != nil {
			return 0, 0, err
		}
		if op.ended() {
			return at.Sub(op.UpdatedAt), 0, nil
		}
	}
}

// waitReceived waits until rc received want distinct deliveries.
func waitReceived(ctx context.Context, rc *receiver, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		got := rc.received()
		switch {
		case got.distinct >= want:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("the receiver got %d of %d webhooks within %s", got.distinct, want, timeout)
		case ctx.Err() != nil:
			return ctx.Err()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// secondsOf is the p50 and p99 of ds in seconds, and their max.
func secondsOf(ds []time.Duration) (latency, float64) {
	s := make([]float64, len(ds))
	for i, d := range ds {
		s[i] = d.Seconds()
	}
	return secondsOfFloats(s)
}

func secondsOfFloats(s []float64) (latency, float64) {
	if len(s) == 0 {
		return latency{}, 0
	}
	return percentiles(s), slices.Max(s)
}
