package storm

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/oncehq/once/app"
)

// stormResult is one run of the storm: N requests with one key and one
// body, sent at once.
type stormResult struct {
	Requests int
	// Executions is what the database says: media rows the request made.
	Executions int
	// Fresh is what the clients saw: 201 answers that were not replays.
	Fresh   int
	Answers map[int]int
	Latency latencies
	Conns   connPeak
	// PoolLimit is the configured pool of the process, 0 if unbounded.
	PoolLimit int
}

// runStorm sends n identical requests to `once serve` at once, each on a
// connection of its own, while sampling the connections of the service's
// role.
func runStorm(ctx context.Context, r *runner, d *deployment, n int, progress io.Writer) (stormResult, error) {
	res := stormResult{Requests: n, PoolLimit: poolLimit(d.config, r.cfg.PoolSetting)}
	if err := d.startServe(ctx, n, "ONCE_QUEUE", app.QueueMemory); err != nil {
		return res, err
	}
	filename := "storm-" + uuid.NewString()
	key, body := uuid.NewString(), mediaBody(filename)

	var answers tally
	var fresh atomic.Int64
	s := sampleConnections(r.super, d.db.AppRole)
	burst(n, func() answer { return d.api.post(ctx, mediaPath, key, body) }, func(a answer) {
		answers.add(a)
		if a.status == 201 && !a.replayed {
			fresh.Add(1)
		}
	})
	var err error
	if res.Conns, res.Executions, err = d.executionsAfter(ctx, s, filename); err != nil {
		return res, err
	}
	res.Fresh = int(fresh.Load())
	res.Answers, res.Latency = answers.counts(), answers.latency()
	fmt.Fprintf(progress, "[%s] %d requests: %d execution(s), answers %s, p50 %s p99 %s max %s, peak connections %d (+%d LISTEN)\n",
		d.label, n, res.Executions, formatAnswers([]map[int]int{res.Answers}),
		ms(res.Latency.P50), ms(res.Latency.P99), ms(res.Latency.Max), res.Conns.Pool, res.Conns.Listen)
	return res, nil
}
