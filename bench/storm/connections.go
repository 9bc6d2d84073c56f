package storm

import (
	"context"
	"database/sql"
	"time"
)

// sampleEvery is how often pg_stat_activity is read while a scenario runs.
const sampleEvery = 5 * time.Millisecond

// connectionsOfRole counts one login role's sessions in the whole cluster:
// those of its pools, and its LISTEN sessions, which a process that
// dispatches holds outside its pool (LISTEN is per session).
const connectionsOfRole = `
SELECT count(*) FILTER (WHERE query NOT LIKE 'LISTEN %'),
       count(*) FILTER (WHERE query LIKE 'LISTEN %')
  FROM pg_catalog.pg_stat_activity
 WHERE usename = $1`

// connPeak is the most sessions a role held at once while a scenario ran.
type connPeak struct{ Pool, Listen int }

// sampler reads pg_stat_activity until finish, as a superuser (whose
// reserved connection slots stay free when the role has taken every other
// one).
type sampler struct {
	super  *sql.DB
	role   string
	cancel context.CancelFunc
	done   chan struct{}
	peak   connPeak
}

func sampleConnections(super *sql.DB, role string) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{super: super, role: role, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			s.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// sample reads the role's sessions once and keeps the peak. While
// PostgreSQL restarts the read fails; the peak is of the samples that
// answered.
func (s *sampler) sample(ctx context.Context) {
	var pool, listen int
	if err := s.super.QueryRowContext(ctx, connectionsOfRole, s.role).Scan(&pool, &listen); err == nil {
		s.peak.Pool, s.peak.Listen = max(s.peak.Pool, pool), max(s.peak.Listen, listen)
	}
}

// finish stops sampling and returns the peak; it may be called again. It
// samples once more after the scenario: on a loaded machine a short
// scenario can end before the loop's first read answers, and the sessions
// the pool keeps idle are still there to be counted.
func (s *sampler) finish() connPeak {
	s.cancel()
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.sample(ctx)
	return s.peak
}
