package work

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
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
	// ScenarioPlatformThrottle and ScenarioSlowFairness are the fleet's
	// (run when named): a platform's whole bucket, and a workspace whose
	// destinations answer slowly.
	ScenarioPlatformThrottle = "throttle-platform"
	ScenarioSlowFairness     = "fairness-slow"
	// ScenarioOrdering is the fleet's too: jobs of many ordering keys,
	// several live per key, while workers are killed -9.
	ScenarioOrdering = "ordering"
)

var scenarios = []string{ScenarioThroughput, ScenarioFairness, ScenarioOutage, ScenarioThrottle, ScenarioPush, ScenarioPushOutage,
	ScenarioPlatformThrottle, ScenarioSlowFairness, ScenarioOrdering}

// fleetScenarios run once per worker count of --workers; the others with
// one worker (they measure that worker's limits and its clients).
var fleetScenarios = []string{ScenarioFairness, ScenarioOutage, ScenarioThrottle, ScenarioPlatformThrottle, ScenarioSlowFairness,
	ScenarioOrdering}

// DefaultScenarios is the work side's scenarios; the push scenarios
// (webhooks and ?wait=) and the fleet's run when named.
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
	// Workers are the counts of `once work` processes each fleet scenario
	// runs with, each in every repetition (ParseWorkers).
	Workers []int
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
	// OutageCalm runs the same load without the outage first, for amazon's
	// p99 beside it; off, a long outage's repetition takes half the time.
	OutageCalm bool
	// Throttled is the throttled shop's jobs; ShopBucket its bucket
	// ("capacity:leak per second"); OtherRate the other shops' jobs per
	// second while it runs.
	Throttled  int
	ShopBucket string
	OtherRate  int

	// PlatformBucket is amazon's bucket for all its shops together
	// ("capacity:leak per second") in throttle-platform, PlatformJobs its
	// verifications, one per shop.
	PlatformBucket string
	PlatformJobs   int
	// SlowDestinations are the shops of fairness-slow's workspace H, each
	// with SlowJobs verifications whose calls take SlowLatency; FastJobs
	// are workspace N's, each of a shop of its own, at Latency.
	SlowDestinations, SlowJobs, FastJobs int
	SlowLatency                          time.Duration

	// OrderingJobs are ordering's publications, over OrderingKeys keys
	// (products, each published to one of OrderingStores stores) while one
	// worker is killed -9 every KillEvery and started again.
	OrderingJobs, OrderingKeys, OrderingStores int
	KillEvery                                  time.Duration

	// PushRate is the operations started per second, for PushFor, by the
	// push scenarios; ReceiverDown how long push-outage's webhook
	// receiver answers 503, from PushFor/2 after the first.
	PushRate              int
	PushFor, ReceiverDown time.Duration

	// WorkEnv is laid over the worker's environment only (key, value
	// pairs), to try a setting of the worker without its neighbours.
	WorkEnv []string

	// RiverPeer is the bench/peers binary: throughput also runs River
	// doing the same work (`peers river-work`); "" runs no peer.
	RiverPeer string
	// ProfileDir, if set, receives a CPU profile of the throughput runs'
	// worker (its first ProfileSeconds) and their pg_stat_statements.
	ProfileDir     string
	ProfileSeconds int
}

func (c Config) validate() error {
	var errs []error
	for _, s := range c.Scenarios {
		if !slices.Contains(scenarios, s) {
			errs = append(errs, fmt.Errorf("unknown scenario %q (want %s)", s, AllScenarios))
		}
	}
	if c.ProfileDir != "" && c.ProfileSeconds < 1 {
		errs = append(errs, fmt.Errorf("--profile-seconds %d: want at least 1", c.ProfileSeconds))
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
	if len(c.Workers) == 0 {
		errs = append(errs, errors.New("--workers: at least one count"))
	}
	if c.runs(ScenarioPlatformThrottle) && c.PlatformJobs < 1 {
		errs = append(errs, errors.New("--platform-jobs must be at least 1"))
	}
	if c.runs(ScenarioSlowFairness) && (c.SlowDestinations < 1 || c.SlowJobs < 1 || c.FastJobs < 1 || c.SlowLatency <= 0) {
		errs = append(errs, errors.New("--slow-destinations, --slow-jobs and --fast-jobs must be at least 1, --slow-latency positive"))
	}
	if c.runs(ScenarioOrdering) && (c.OrderingKeys < 1 || c.OrderingJobs < 2*c.OrderingKeys || c.OrderingStores < 1 || c.KillEvery <= 0) {
		errs = append(errs, errors.New("--ordering-keys and --ordering-stores must be at least 1, --ordering-jobs at least twice the keys, --kill-every positive"))
	}
	for flag, s := range map[string]string{"--shop-bucket": c.ShopBucket, "--platform-bucket": c.PlatformBucket} {
		if _, err := parseBucket(flag, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c Config) runs(scenario string) bool { return slices.Contains(c.Scenarios, scenario) }

// bucket is a leaky bucket as `once sim --shop-bucket` takes it.
type bucket struct {
	capacity int
	leak     float64 // per second
}

func parseBucket(flag, s string) (bucket, error) {
	var b bucket
	if _, err := fmt.Sscanf(s, "%d:%g", &b.capacity, &b.leak); err != nil || b.capacity < 1 || b.leak <= 0 {
		return b, fmt.Errorf("%s %q: want capacity:leak_per_second, e.g. 40:2", flag, s)
	}
	return b, nil
}

// ParseWorkers reads --workers: counts of workers, comma-separated, each
// at least 1 and named once ("1,3").
func ParseWorkers(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || slices.Contains(out, n) {
			return nil, fmt.Errorf("--workers %q: want distinct counts of at least 1, comma-separated, e.g. 1,3", s)
		}
		out = append(out, n)
	}
	return out, nil
}
