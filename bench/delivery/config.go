package delivery

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Publisher kinds, as --queues names them.
const (
	PublisherMemory = "memory"
	PublisherRedis  = "redis"
	PublisherAMQP   = "amqp"
	PublisherBullMQ = "bullmq"
)

// EventType is the type of the bench's events; with the run's prefix it is
// the topic they go to.
const EventType = "bench.dispatch"

// Brokers are where the Dispatchers publish.
type Brokers struct {
	RedisURL string
	AMQPURL  string
}

// Common is what drain and steady share.
type Common struct {
	Brokers
	DatabaseURL string // superuser: creates and drops the bench databases
	Workspaces  int
	Dispatchers []int
	Reps        int
	Batch       int
	Concurrency int // the Dispatchers' batches in flight (0: the default)
	JSON        bool
	Timeout     time.Duration // bounds one measurement
	Binary      string        // this binary, re-executed for the Dispatcher and producer processes
	// ProfileDir, if set, receives a CPU profile of every Dispatcher
	// process (drain and steady).
	ProfileDir string
}

// DrainConfig is what `once-bench drain` measures.
type DrainConfig struct {
	Common
	Events  int
	Queues  []string
	Clients []int // raw claim+mark clients
}

// SteadyConfig is what `once-bench steady` measures.
type SteadyConfig struct {
	Common
	Rate     int           // events per second the producer commits
	Duration time.Duration // how long it produces per measurement
	// ProducerConns is how many connections (and transactions at once) the
	// producer commits from.
	ProducerConns int
	// Paths are how the producer's events reach the stream, each measured
	// in every repetition: PathDispatcher (the Dispatchers alone) and
	// PathRelay (the producer relays its own events, as `once serve` with
	// ONCE_RELAY; the Dispatchers only make up).
	Paths []string
}

// The paths of steady.
const (
	PathDispatcher = "dispatcher"
	PathRelay      = "relay"
	DefaultPaths   = PathDispatcher + "," + PathRelay
)

// Defaults.
const (
	DefaultEvents        = 100000
	DefaultWorkspaces    = 8
	DefaultDispatchers   = "1,3"
	DefaultQueues        = "redis,amqp"
	DefaultClients       = "1,3"
	DefaultReps          = 3
	DefaultBatch         = 100
	DefaultTimeout       = 5 * time.Minute
	DefaultRate          = 2000
	DefaultDuration      = 10 * time.Second
	DefaultDatabaseURL   = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultRedisURL      = "redis://127.0.0.1:6379/0"
	DefaultAMQPURL       = "amqp://guest:guest@127.0.0.1:5672/"
	payloadPad           = 56 // {"n": 12345, "pad": "xxx…"}: about 80 bytes
	DefaultProducerConns = 16
	// fairness: one Dispatcher (what `once serve` runs), half a million
	// events behind one workspace, the others at half steady's rate.
	DefaultFairnessDispatchers = "1"
	DefaultBacklog             = 500000
	DefaultFairnessRate        = 1000
)

// ParseQueues reads a comma-separated list of publisher kinds.
func ParseQueues(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains([]string{PublisherMemory, PublisherRedis, PublisherAMQP, PublisherBullMQ}, p) {
			return nil, fmt.Errorf("unknown queue %q (want memory, redis, amqp or bullmq)", p)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no queue given")
	}
	return out, nil
}

// ParseCounts reads a comma-separated list of positive numbers.
func ParseCounts(what, s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive number", what, p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: none given", what)
	}
	return out, nil
}

func (c Common) validate() error {
	switch {
	case c.Workspaces < 1, c.Reps < 1, c.Batch < 1, c.Concurrency < 0:
		return fmt.Errorf("workspaces, reps and batch must be positive")
	case c.Timeout <= 0:
		return fmt.Errorf("timeout must be positive")
	case len(c.Dispatchers) == 0:
		return fmt.Errorf("at least one dispatcher count is needed")
	}
	return nil
}
