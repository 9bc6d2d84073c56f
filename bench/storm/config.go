package storm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scenario names, as --scenarios names them.
const (
	ScenarioStorm   = "storm"
	ScenarioReplays = "replays"
	ScenarioOutage  = "outage"
	ScenarioRestart = "restart"
)

var allScenarios = []string{ScenarioStorm, ScenarioReplays, ScenarioOutage, ScenarioRestart}

// Config is what one `once-bench storm` measures.
type Config struct {
	// Binary is the once executable the processes run.
	Binary string
	// Scenarios to run, in the order of allScenarios.
	Scenarios []string
	// Repetitions of the storm and the replays, interleaved; the outage and
	// the restart run once.
	Repetitions int

	// StormRequests identical requests are sent at once.
	StormRequests int
	// ReplayKeys completed keys are each replayed ReplayConcurrency times at
	// once.
	ReplayKeys        int
	ReplayConcurrency int

	// Outage is how long the broker is cut.
	Outage time.Duration
	// Rate is the logical requests per second the producers of the outage
	// and restart scenarios start.
	Rate int
	// Around is how long the producers run before a fault and after it ends.
	Around time.Duration
	// DrainTimeout bounds the wait for the backlog after the load.
	DrainTimeout time.Duration
	// PostgresDown is how long the restart scenario keeps PostgreSQL stopped.
	PostgresDown time.Duration

	// PostgresBin is the directory of initdb and pg_ctl; empty finds them.
	PostgresBin string
	// MaxConnections is max_connections of the private cluster.
	MaxConnections int
	// RedisURL is the broker of the outage and restart scenarios.
	RedisURL string
	// PoolSetting is the environment variable that bounds a process's
	// database pool; its value is read through app.Config, so a pool setting
	// added to the service is judged without a change here.
	PoolSetting string
}

// Defaults: the sizes the targets are stated for.
const (
	DefaultScenarios         = "storm,replays,outage,restart"
	DefaultRepetitions       = 3
	DefaultStormRequests     = 1000
	DefaultReplayKeys        = 200
	DefaultReplayConcurrency = 16
	DefaultOutage            = 10 * time.Minute
	DefaultRate              = 10
	DefaultAround            = 5 * time.Second
	DefaultDrainTimeout      = 15 * time.Minute
	DefaultPostgresDown      = 5 * time.Second
	DefaultMaxConnections    = 100
	DefaultRedisURL          = "redis://127.0.0.1:6379/0"
	DefaultPoolSetting       = "ONCE_DB_MAX_CONNS"
)

// ParseScenarios reads a comma-separated list of scenario names.
func ParseScenarios(s string) ([]string, error) {
	return parseList(s, "scenario", func(p string) (string, error) {
		if !slices.Contains(allScenarios, p) {
			return "", fmt.Errorf("unknown scenario %q (want %s)", p, strings.Join(allScenarios, ", "))
		}
		return p, nil
	})
}

// parseList reads a comma-separated list of what, each read by parse,
// without repeats and not empty.
func parseList[T comparable](s, what string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := parse(p)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s given", what)
	}
	return out, nil
}

func (c Config) runs(scenario string) bool { return slices.Contains(c.Scenarios, scenario) }

func (c Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Binary == "" {
		bad("the once binary is required")
	}
	if len(c.Scenarios) == 0 {
		bad("no scenario given")
	}
	if c.Repetitions < 1 {
		bad("repetitions must be at least 1")
	}
	if c.StormRequests < 1 || c.ReplayKeys < 1 || c.ReplayConcurrency < 1 || c.Rate < 1 {
		bad("requests, keys, concurrency and rate must be positive")
	}
	if c.Outage <= 0 || c.Around <= 0 || c.DrainTimeout <= 0 || c.PostgresDown <= 0 {
		bad("outage, around, drain timeout and PostgreSQL downtime must be positive")
	}
	if c.MaxConnections < 10 {
		bad("max connections must be at least 10")
	}
	if c.PoolSetting == "" {
		bad("the pool setting's name is required")
	}
	return errors.Join(errs...)
}
