package work

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/domain/model"
)

// phases splits jobs' commit→end at their platform call, in seconds (p50
// and p99 of each): from the commit to the call's arrival at the
// simulator (the queue, a slot, the job's first transaction), and from
// the call's answer to the end recorded (the job's last transaction).
type phases struct {
	beforeCall, afterCall latency
}

// phasesOf reads the jobs of workspace (one store each, on shopify) and
// their calls' spans from the simulator.
func phasesOf(ctx context.Context, st *stack, workspace string) (phases, error) {
	rows, err := st.svc.Super().QueryContext(ctx, `SELECT s.external_shop_id, o.created_at, o.updated_at `+
		jobsOf+`o.workspace_id = $1 AND o.status IN ('succeeded', 'failed')`, workspace)
	if err != nil {
		return phases{}, err
	}
	defer rows.Close()
	type job struct{ committed, ended time.Time }
	jobs := map[string]job{}
	var keys []string
	for rows.Next() {
		var shop string
		var j job
		if err := rows.Scan(&shop, &j.committed, &j.ended); err != nil {
			return phases{}, err
		}
		key := simhttp.InFlightShop(model.Destination{System: "shopify", Account: shop})
		jobs[key] = j
		keys = append(keys, key)
	}
	if err := rows.Err(); err != nil {
		return phases{}, err
	}
	spans, err := st.sim.InFlight(ctx, keys...)
	if err != nil {
		return phases{}, err
	}
	var before, after []float64
	for key, j := range jobs {
		calls := spans.Calls[key]
		if len(calls) == 0 || calls[len(calls)-1].End.IsZero() {
			continue
		}
		before = append(before, calls[0].Start.Sub(j.committed).Seconds())
		after = append(after, j.ended.Sub(calls[len(calls)-1].End).Seconds())
	}
	return phases{beforeCall: percentiles(before), afterCall: percentiles(after)}, nil
}

// percentiles are the p50 and p99 of values (nearest rank), zero for none.
func percentiles(values []float64) latency {
	if len(values) == 0 {
		return latency{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return latency{p50: rank(0.5), p99: rank(0.99)}
}
