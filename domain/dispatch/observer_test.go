package dispatch_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type countingObserver struct {
	mu                          sync.Mutex
	published                   []uuid.UUID
	publishedAt                 time.Time
	publishFailed, deadLettered int
	discoveries, discovered     int
	brokerUp                    []bool
}

func (o *countingObserver) Published(events []model.OutboxEvent, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range events {
		o.published = append(o.published, e.ID)
	}
	o.publishedAt = at
}

func (o *countingObserver) PublishFailed(n int)       { o.mu.Lock(); o.publishFailed += n; o.mu.Unlock() }
func (o *countingObserver) DeadLettered(n int)        { o.mu.Lock(); o.deadLettered += n; o.mu.Unlock() }
func (o *countingObserver) Round(dispatch.RoundStats) {}
func (o *countingObserver) Discovered(_ time.Duration, workspaces int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.discoveries++
	o.discovered += workspaces
}
func (o *countingObserver) BrokerUp(up bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.brokerUp = append(o.brokerUp, up)
}

func TestObserverHearsWhatHappened(t *testing.T) {
	e := newEnv(t)
	good, bad := uuid.New(), uuid.New()
	goodIDs := e.appendEvents(t, good, 2)
	e.appendEvents(t, bad, 3)
	pub := &recorder{}
	pub.setFail(func(msgs []ports.Message) error {
		if msgs[0].WorkspaceID == bad {
			return errors.New("refused")
		}
		return nil
	})
	obs := &countingObserver{}
	d, err := dispatch.New(dispatch.Config{Owner: "a", MaxAttempts: 2}, dispatch.Deps{
		UnitOfWork: e.uow, Discovery: e.disc, Publisher: pub, Clock: e.clock, Observer: obs,
	})
	require.NoError(t, err)

	res, err := d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{Published: 2, Failed: 3}, res)
	e.clock.Advance(time.Hour)
	res, err = d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, dispatch.Result{DeadLettered: 3}, res)

	assert.ElementsMatch(t, goodIDs, obs.published)
	assert.False(t, obs.publishedAt.IsZero())
	assert.Equal(t, 3, obs.publishFailed)
	assert.Equal(t, 3, obs.deadLettered)
	// Each round's discovery is heard: the first found both workspaces,
	// the second the one left.
	assert.GreaterOrEqual(t, obs.discoveries, 2)
	assert.GreaterOrEqual(t, obs.discovered, 3)
}
