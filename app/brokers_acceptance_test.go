package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/redistest"
)

// ONCE_REDIS_URL reaches a Sentinel-managed primary and a Redis Cluster
// as it reaches a single node: a store connected through the API is
// verified by the worker, the event going through the Dispatcher and
// Redis Streams of that topology.
func TestPostgresDeliveryThroughEachRedisTopology(t *testing.T) {
	for name, url := range map[string]string{
		"cluster":  redistest.Cluster(t).URL(),
		"sentinel": redistest.Sentinel(t).URL(),
	} {
		t.Run(name, func(t *testing.T) {
			db := pgtest.New(t)
			cfg := apitest.Config(db.AppDSN)
			cfg.Queue, cfg.Dispatcher, cfg.Worker, cfg.RedisURL = app.QueueRedis, true, true, url
			cfg.DispatchPollInterval = 100 * time.Millisecond
			s := apitest.Start(t, cfg, db)
			ready(t, s)
			created := createStore(t, s, "topology-"+name)
			op := s.WaitOperation(t, created.Operation.ID, 30*time.Second)
			assert.Equal(t, "succeeded", op.Status, op.Error)
			assert.Equal(t, 1, s.Sim.EffectCount())
		})
	}
}

// A Redis Cluster node reached through a single-node URL (the stream of
// the events is served by another master: MOVED): the Dispatcher spends
// no attempt and dead-letters nothing, /readyz says why (the broker check
// names the Cluster node, the publishing check the MOVED answer), and
// once_dispatch_broker_up reads 0.
func TestPostgresAClusterNodeReachedAsASingleNodeIsNotReady(t *testing.T) {
	cluster := redistest.Cluster(t)
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	for !cluster.Elsewhere(t, queue.Topic(cfg.QueuePrefix, model.EventStoreCredentialsVerify)) {
		cfg.QueuePrefix = "once-test-" + uuid.NewString()[:8] + "."
	}
	cfg.Queue, cfg.Dispatcher, cfg.RedisURL = app.QueueRedis, true, cluster.NodeURL()
	cfg.DispatchPollInterval, cfg.DispatchBreakerOpen = 50*time.Millisecond, 100*time.Millisecond
	cfg.DispatchMaxAttempts = 2
	s := apitest.Start(t, cfg, db)
	for i := range 3 {
		createStore(t, s, fmt.Sprintf("moved-%d", i))
	}

	checks := notReady(t, s, "publishing", "MOVED")
	assert.Contains(t, checks["broker"], "Redis is a Cluster node, but the URL names a single node")
	assert.Contains(t, checks["publishing"], "the broker is misconfigured")
	assert.Contains(t, s.Metrics(t), "once_dispatch_broker_up 0")
	assertNoAttemptSpent(t, s, "MOVED")
}

// RabbitMQ refusing a queue declaration (the queue exists as a classic
// queue; once declares quorum queues): no attempt is spent, nothing is
// dead-lettered, /readyz says why.
func TestPostgresARefusedQueueDeclarationIsNotReady(t *testing.T) {
	db := pgtest.New(t)
	cfg := apitest.Config(db.AppDSN)
	cfg.Queue, cfg.Dispatcher = app.QueueAMQP, true
	cfg.DispatchPollInterval, cfg.DispatchBreakerOpen = 50*time.Millisecond, 100*time.Millisecond
	cfg.DispatchMaxAttempts = 2
	u, err := amqp091.ParseURI(cfg.AMQPURL)
	require.NoError(t, err)
	queuetest.RequireBroker(t, "RabbitMQ", fmt.Sprintf("%s:%d", u.Host, u.Port))
	topic := queue.Topic(cfg.QueuePrefix, model.EventStoreCredentialsVerify)
	conn, err := amqp091.Dial(cfg.AMQPURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	_, err = ch.QueueDeclare(topic, true, false, false, false, nil) // classic, as before quorum queues
	require.NoError(t, err)
	t.Cleanup(func() { _ = amqp.DeleteTopology(conn, topic) })

	s := apitest.Start(t, cfg, db)
	for i := range 3 {
		createStore(t, s, fmt.Sprintf("refused-%d", i))
	}
	checks := notReady(t, s, "publishing", "PRECONDITION_FAILED")
	assert.Equal(t, "ok", checks["broker"], "RabbitMQ answers")
	assert.Contains(t, checks["publishing"], "it exists with other arguments")
	assertNoAttemptSpent(t, s, "PRECONDITION_FAILED")
}

// ready waits until /readyz answers 200.
func ready(t *testing.T, s *apitest.Server) {
	t.Helper()
	apitest.Eventually(t, 30*time.Second, "ready", func() bool {
		status, _ := readiness(t, s)
		return status == http.StatusOK
	})
}

// notReady waits until /readyz answers 503 with check saying says, and
// returns every check.
func notReady(t *testing.T, s *apitest.Server, check, says string) map[string]string {
	t.Helper()
	var checks map[string]string
	apitest.Eventually(t, 30*time.Second, "/readyz: "+check+" says "+says, func() bool {
		var status int
		status, checks = readiness(t, s)
		return status == http.StatusServiceUnavailable && strings.Contains(checks[check], says)
	})
	t.Logf("/readyz: %v", checks)
	return checks
}

func readiness(t *testing.T, s *apitest.Server) (int, map[string]string) {
	t.Helper()
	res, err := http.Get(s.OpsURL + "/readyz")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var r struct{ Checks map[string]string }
	require.NoError(t, json.Unmarshal(body, &r), string(body))
	return res.StatusCode, r.Checks
}

// assertNoAttemptSpent checks that every event was tried (its last error
// says why it waits) and none spent an attempt or was dead-lettered.
func assertNoAttemptSpent(t *testing.T, s *apitest.Server, says string) {
	t.Helper()
	apitest.Eventually(t, 10*time.Second, "every event tried", func() bool {
		for _, e := range s.Events(t) {
			if e.LastError == "" {
				return false
			}
		}
		return true
	})
	for _, e := range s.Events(t) {
		// Pending, or dispatching while a probe is in flight.
		assert.Contains(t, []model.OutboxStatus{model.OutboxPending, model.OutboxDispatching}, e.Status, e.LastError)
		assert.Zero(t, e.AttemptCount, e.LastError)
		assert.Contains(t, e.LastError, says)
	}
}
