package storm

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads a process's /metrics.
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// gauge is the value of an unlabelled gauge (go_goroutines,
// process_resident_memory_bytes), NaN when absent.
func gauge(families map[string]*dto.MetricFamily, name string) float64 {
	f, ok := families[name]
	if !ok || len(f.GetMetric()) == 0 {
		return math.NaN()
	}
	return f.GetMetric()[0].GetGauge().GetValue()
}

// buckets is a cumulative histogram: upper bound -> count.
type buckets map[float64]uint64

// add sums other's cumulative counts into b (two processes' copies of
// one histogram, same buckets).
func (b buckets) add(other buckets) {
	for bound, n := range other {
		b[bound] += n
	}
}

// histogramOf is the unlabelled histogram name, empty when absent.
func histogramOf(families map[string]*dto.MetricFamily, name string) buckets {
	out := buckets{}
	f, ok := families[name]
	if !ok || len(f.GetMetric()) == 0 {
		return out
	}
	for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
		out[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return out
}

// quantileSince is the q-quantile of the observations made between prev
// and cur (cumulative histograms of the same process), interpolated
// linearly within its bucket as Prometheus's histogram_quantile does: as
// fine as the buckets, no finer. NaN when nothing was observed.
func quantileSince(prev, cur buckets, q float64) float64 {
	bounds := make([]float64, 0, len(cur))
	for b := range cur {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return math.NaN()
	}
	total := float64(cur[math.Inf(1)] - prev[math.Inf(1)])
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range bounds {
		n := float64(cur[b] - prev[b])
		if n >= rank {
			if math.IsInf(b, 1) {
				return lower // beyond the last finite bucket: its bound
			}
			return lower + (b-lower)*(rank-below)/max(n-below, 1)
		}
		lower, below = b, n
	}
	return lower
}
