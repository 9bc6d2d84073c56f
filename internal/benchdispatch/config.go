package benchdispatch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Publisher kinds, as --publishers names them.
const (
	PublisherMemory = "memory"
	PublisherRedis  = "redis"
	PublisherAMQP   = "amqp"
	PublisherBullMQ = "bullmq"
)

// Config is what one `once bench dispatch` measures.
type Config struct {
	// Events committed per run, spread evenly over Workspaces.
	Events     int
	Workspaces int
	// Publishers and Instances: one run for each pair.
	Publishers []string
	Instances  []int
	// Batch is the Dispatcher's batch (events claimed and published at once).
	Batch int
	// Producers commit concurrently, EventsPerTx events per transaction.
	Producers   int
	EventsPerTx int
	// Timeout bounds one run: if not every event was accepted by then, the
	// bench aborts.
	Timeout time.Duration

	SuperuserURL string
	RedisURL     string
	AMQPURL      string
}

// Defaults.
const (
	DefaultEvents       = 20000
	DefaultWorkspaces   = 20
	DefaultPublishers   = "memory,redis,amqp,bullmq"
	DefaultInstances    = "1,3"
	DefaultBatch        = 100
	DefaultProducers    = 4
	DefaultEventsPerTx  = 10
	DefaultTimeout      = 3 * time.Minute
	DefaultSuperuserURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultRedisURL     = "redis://127.0.0.1:6379/0"
	DefaultAMQPURL      = "amqp://guest:guest@127.0.0.1:5672/"
)

// ParsePublishers reads a comma-separated list of publisher kinds.
func ParsePublishers(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains([]string{PublisherMemory, PublisherRedis, PublisherAMQP, PublisherBullMQ}, p) {
			return nil, fmt.Errorf("unknown publisher %q (want memory, redis, amqp or bullmq)", p)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no publisher given")
	}
	return out, nil
}

// ParseInstances reads a comma-separated list of dispatcher counts.
func ParseInstances(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("instances: %q is not a positive number", p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no instance count given")
	}
	return out, nil
}

func (c Config) validate() error {
	switch {
	case c.Events < 1, c.Workspaces < 1, c.Batch < 1, c.Producers < 1, c.EventsPerTx < 1:
		return fmt.Errorf("events, workspaces, batch, producers and events per transaction must be positive")
	case c.Timeout <= 0:
		return fmt.Errorf("timeout must be positive")
	case len(c.Publishers) == 0 || len(c.Instances) == 0:
		return fmt.Errorf("at least one publisher and one instance count are needed")
	}
	return nil
}
