package storm

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/oncehq/once/app"
)

// replayResult is one run of the replays: K completed keys, each replayed
// C times at once.
type replayResult struct {
	Keys, Concurrency int
	Replays           int
	// Saved replays got the saved response: 201, Idempotent-Replayed, the
	// same media.
	Saved int
	// Executions is media rows of the keys: one per key unless a replay
	// executed again.
	Executions int
	Answers    map[int]int
	Latency    latencies
	Conns      connPeak
}

// SavedShare is the percentage of replays that got the saved response.
func (r replayResult) SavedShare() float64 {
	if r.Replays == 0 {
		return 0
	}
	return 100 * float64(r.Saved) / float64(r.Replays)
}

// runReplays completes keys one by one, then replays each in a burst of
// concurrency identical requests released together.
func runReplays(ctx context.Context, r *runner, d *deployment, keys, concurrency int, progress io.Writer) (replayResult, error) {
	res := replayResult{Keys: keys, Concurrency: concurrency}
	if err := d.startServe(ctx, concurrency, "ONCE_QUEUE", app.QueueMemory); err != nil {
		return res, err
	}
	prefix := "replay-" + uuid.NewString() + "-"
	type completed struct {
		key     string
		body    []byte
		mediaID string
	}
	originals := make([]completed, keys)
	for i := range originals {
		o := completed{key: uuid.NewString(), body: mediaBody(fmt.Sprintf("%s%d", prefix, i))}
		a := d.api.post(ctx, mediaPath, o.key, o.body)
		if a.status != 201 || mediaID(a.body) == "" {
			return res, fmt.Errorf("completing key %d: answered %s: %s", i+1, statusName(a.status), a.body)
		}
		o.mediaID = mediaID(a.body)
		originals[i] = o
	}

	var answers tally
	var saved atomic.Int64
	s := sampleConnections(r.super, d.db.AppRole)
	for _, o := range originals {
		burst(concurrency, func() answer { return d.api.post(ctx, mediaPath, o.key, o.body) }, func(a answer) {
			answers.add(a)
			if a.status == 201 && a.replayed && mediaID(a.body) == o.mediaID {
				saved.Add(1)
			}
		})
		if ctx.Err() != nil {
			break
		}
	}
	var err error
	if res.Conns, res.Executions, err = d.executionsAfter(ctx, s, prefix); err != nil {
		return res, err
	}
	res.Answers, res.Latency = answers.counts(), answers.latency()
	res.Replays, res.Saved = total(res.Answers), int(saved.Load())
	fmt.Fprintf(progress, "[%s] %d keys × %d replays: %.1f %% saved response, answers %s, p50 %s p99 %s max %s\n",
		d.label, keys, concurrency, res.SavedShare(), formatAnswers([]map[int]int{res.Answers}),
		ms(res.Latency.P50), ms(res.Latency.P99), ms(res.Latency.Max))
	return res, nil
}
