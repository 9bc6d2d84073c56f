package benchstorm

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
	cancel context.CancelFunc
	done   chan struct{}
	peak   connPeak
}

func sampleConnections(super *sql.DB, role string) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			var pool, listen int
			// While PostgreSQL restarts the read fails; the peak is of the
			// samples that answered.
			if err := super.QueryRowContext(ctx, connectionsOfRole, role).Scan(&pool, &listen); err == nil {
				s.peak.Pool, s.peak.Listen = max(s.peak.Pool, pool), max(s.peak.Listen, listen)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// finish stops sampling and returns the peak; it may be called again.
func (s *sampler) finish() connPeak {
	s.cancel()
	<-s.done
	return s.peak
}
