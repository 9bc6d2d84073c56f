package work

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scenarios of the bench, in the order they run within a repetition.
const (
	ScenarioThroughput = "throughput"
	ScenarioFairness   = "fairness"
	ScenarioOutage     = "outage"
	ScenarioThrottle   = "throttle"
	ScenarioPush       = "push"
	ScenarioPushOutage = "push-outage"
)

var scenarios = []string{ScenarioThroughput, ScenarioFairness, ScenarioOutage, ScenarioThrottle, ScenarioPush, ScenarioPushOutage}

// DefaultScenarios is the work side's scenarios; the push scenarios
// (webhooks and ?wait=) run when named.
var DefaultScenarios = strings.Join(scenarios[:4], ",")

// AllScenarios is every scenario.
var AllScenarios = strings.Join(scenarios, ",")

// Config is what one `once-bench work` runs.
type Config struct {
	Binary         string
	PostgresBin    string
	MaxConnections int
	RedisURL       string

	Scenarios []string
	Reps      int
	// Latency is the simulator's latency of every platform call.
	Latency time.Duration
	// Timeout bounds the wait for a run's jobs to end.
	Timeout time.Duration

	// Jobs is the throughput backlog; BeforeJobs the backlog of the
	// one-slot run (at one job per latency it takes BeforeJobs × Latency).
	Jobs, BeforeJobs int
	// Backlog is the noisy workspace's jobs of fairness, Few the quiet one's.
	Backlog, Few int
	// OutageFor is how long shopify is down; OutageRate the jobs created
	// per second (both platforms together) from OutageLead before it to
	// OutageLead after it.
	OutageFor, OutageLead time.Duration
	OutageRate            int
	// Throttled is the throttled shop's jobs; ShopBucket its bucket
	// ("capacity:leak per second"); OtherRate the other shops' jobs per
	// second while it runs.
	Throttled  int
	ShopBucket string
	OtherRate  int

	// PushRate is the operations started per second, for PushFor, by the
	// push scenarios; ReceiverDown how long push-outage's webhook
	// receiver answers 503, from PushFor/2 after the first.
	PushRate              int
	PushFor, ReceiverDown time.Duration

	// WorkEnv is laid over the worker's environment only (key, value
	// pairs), to try a setting of the worker without its neighbours.
	WorkEnv []string
}

func (c Config) validate() error {
	var errs []error
	for _, s := range c.Scenarios {
		if !slices.Contains(scenarios, s) {
			errs = append(errs, fmt.Errorf("unknown scenario %q (want %s)", s, AllScenarios))
		}
	}
	if c.Reps < 1 || c.Jobs < 1 || c.BeforeJobs < 0 || c.Backlog < 1 || c.Few < 1 || c.Throttled < 1 {
		errs = append(errs, errors.New("--reps, --jobs, --backlog, --few and --throttled must be at least 1"))
	}
	if c.Latency <= 0 || c.OutageFor <= 0 || c.OutageRate < 2 || c.OtherRate < 1 {
		errs = append(errs, errors.New("--latency and --outage-for must be positive, --outage-rate at least 2, --other-rate at least 1"))
	}
	if c.runs(ScenarioPush) || c.runs(ScenarioPushOutage) {
		if c.PushRate < 1 || c.PushFor <= 0 || c.ReceiverDown <= 0 {
			errs = append(errs, errors.New("--push-rate must be at least 1, --push-for and --receiver-down positive"))
		}
	}
	if _, err := parseBucket(c.ShopBucket); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) runs(scenario string) bool { return slices.Contains(c.Scenarios, scenario) }

// bucket is a leaky bucket as `once sim --shop-bucket` takes it.
type bucket struct {
	capacity int
	leak     float64 // per second
}

func parseBucket(s string) (bucket, error) {
	var b bucket
	if _, err := fmt.Sscanf(s, "%d:%g", &b.capacity, &b.leak); err != nil || b.capacity < 1 || b.leak <= 0 {
		return b, fmt.Errorf("--shop-bucket %q: want capacity:leak_per_second, e.g. 40:2", s)
	}
	return b, nil
}
