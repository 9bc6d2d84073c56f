package main

import (
	"context"
	"fmt"
	"time"
)

// params are what every variant drains, and where.
type params struct {
	Events       int
	Workspaces   int
	SuperuserURL string
	RedisURL     string
	// Timeout bounds one variant's repetition (load, drain and check).
	Timeout time.Duration
	// Poll is how often XLEN is read while a peer drains.
	Poll time.Duration
}

// result is one variant's repetition.
type result struct {
	Events  int
	Seconds float64
}

func (r result) EventsPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Events) / r.Seconds
}

// peer is a queue library the Dispatcher is compared with. Load writes the
// backlog, bound for stream, into the peer's own tables while nothing
// drains them; Start begins draining them and returns how to stop.
type peer interface {
	Name() string
	// IDField is the stream entry field that carries the event id.
	IDField() string
	Load(ctx context.Context, dbURL, stream string, events []event) error
	Start(ctx context.Context, dbURL, stream string) (stop func(context.Context) error, err error)
}

// drainPeer runs one repetition of p: a fresh database and stream, the
// backlog loaded before the clock starts, then the time from Start until
// XLEN reaches the backlog, then a check that every event arrived.
func drainPeer(ctx context.Context, prm params, p peer, events []event) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, prm.Timeout)
	defer cancel()

	db, err := createScratchDB(ctx, prm.SuperuserURL, "peers_"+p.Name())
	if err != nil {
		return result{}, err
	}
	defer func() {
		dropCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = db.Drop(dropCtx)
	}()

	rdb, err := newRedis(prm.RedisURL)
	if err != nil {
		return result{}, err
	}
	defer rdb.Close()
	stream := "peers:" + p.Name() + ":" + randomSuffix()
	defer rdb.Del(context.Background(), stream)

	if err := p.Load(ctx, db.URL, stream, events); err != nil {
		return result{}, fmt.Errorf("%s: load: %w", p.Name(), err)
	}

	start := time.Now()
	stop, err := p.Start(ctx, db.URL, stream)
	if err != nil {
		return result{}, fmt.Errorf("%s: start: %w", p.Name(), err)
	}
	done, waitErr := waitForStream(ctx, rdb, stream, int64(len(events)), prm.Poll)
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelStop()
	stopErr := stop(stopCtx)
	if waitErr != nil {
		return result{}, fmt.Errorf("%s: %w", p.Name(), waitErr)
	}
	if stopErr != nil {
		return result{}, fmt.Errorf("%s: stop: %w", p.Name(), stopErr)
	}

	distinct, total, err := distinctIDs(ctx, rdb, stream, p.IDField())
	if err != nil {
		return result{}, err
	}
	if distinct != len(events) {
		return result{}, fmt.Errorf("%s: the stream holds %d distinct events of %d (%d entries)", p.Name(), distinct, len(events), total)
	}
	return result{Events: len(events), Seconds: done.Sub(start).Seconds()}, nil
}
