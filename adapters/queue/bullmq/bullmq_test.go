package bullmq_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/bullmqtest"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/redistest"
)

// The publisher contract, judged by a stock BullMQ worker: what it
// processes is what once published; on the shared single Redis, on a
// private 3-master Redis Cluster (the prefix hash-tagged; the worker an
// ioredis Cluster) and through a Sentinel.
func TestBullMQPublisherContract(t *testing.T) {
	queuetest.RequireBroker(t, "Redis", "127.0.0.1:6379")
	for name, url := range map[string]string{
		"single":   bullmqtest.RedisURL(),
		"cluster":  redistest.Cluster(t).URL(),
		"sentinel": redistest.Sentinel(t).URL(),
	} {
		t.Run(name, func(t *testing.T) {
			queuetest.RunPublisherContract(t, func(t *testing.T, prefix string) (ports.Publisher, message.Subscriber) {
				routes, err := bullmq.ParseRoutes("", "")
				require.NoError(t, err)
				e := newEnvOn(t, url, bullmq.Config{Routes: routes})
				return e.pub, &nodeSubscriber{t: t, e: e, topicPrefix: prefix, routes: routes}
			})
		})
	}
}

// On a Redis Cluster a prefix without a hash tag would spread a queue's
// keys over the masters, and every job would fail: refused at once,
// saying what to change.
func TestBullMQRefusesAnUntaggedPrefixOnACluster(t *testing.T) {
	url := redistest.Cluster(t).URL()
	untagged, err := bullmq.ParseRoutes("store.credentials.verify=stores", "")
	require.NoError(t, err)
	_, err = bullmq.New(bullmq.Config{URL: url, Prefix: "bull", Routes: untagged, Job: jobOptions})
	require.ErrorIs(t, err, bullmq.ErrNoHashTag)
	assert.True(t, domain.IsCode(err, domain.CodeValidation))
	assert.Contains(t, err.Error(), "{bull}")

	tagged, err := bullmq.ParseRoutes("store.credentials.verify={stores},*={jobs}", "")
	require.NoError(t, err)
	pub, err := bullmq.New(bullmq.Config{URL: url, Prefix: "bull", Routes: tagged, Job: jobOptions})
	require.NoError(t, err, "every queue name tagged")
	require.NoError(t, pub.Close())
}

// A Redis Cluster node reached through a single-node URL: with an untagged
// prefix the node answers CROSSSLOT (the add script's keys span slots),
// with a tagged one MOVED when the queue's slot is another master's.
// Either is the broker's fault: no attempt is spent, nothing is
// dead-lettered.
func TestBullMQOnAClusterNodeSpendsNoAttempts(t *testing.T) {
	cluster := redistest.Cluster(t)
	routes, err := bullmq.ParseRoutes("", "")
	require.NoError(t, err)
	for says, prefix := range map[string]string{
		"CROSSSLOT": "once-test-bull-" + uuid.NewString()[:8],
		"MOVED":     "{" + movedPrefix(t, cluster) + "}",
	} {
		t.Run(says, func(t *testing.T) {
			pub, err := bullmq.New(bullmq.Config{URL: cluster.NodeURL(), Prefix: prefix, Routes: routes, Job: jobOptions})
			require.NoError(t, err)
			t.Cleanup(func() { _ = pub.Close() })
			queuetest.RunMisconfiguredContract(t, pub, says)
		})
	}
}

// movedPrefix is a prefix whose hash tag is served by another master than
// the cluster's first.
func movedPrefix(t *testing.T, cluster *redistest.ClusterTopology) string {
	for {
		p := "once-test-bull-" + uuid.NewString()[:8]
		if cluster.Elsewhere(t, p) {
			return p
		}
	}
}

func TestBullMQUnreachable(t *testing.T) {
	queuetest.RunUnreachableContract(t, func(t *testing.T) (ports.Publisher, error) {
		pub, err := bullmq.New(bullmq.Config{URL: "redis://127.0.0.1:1/0", DialTimeout: time.Second, Job: jobOptions})
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = pub.Close() })
		return pub, nil
	})
}

// The job hash holds what a BullMQ Queue.add writes, the queue lists hold
// the id, and the worker reads the options back as BullMQ options.
func TestBullMQWritesTheJobLayoutTheWorkerReads(t *testing.T) {
	routes, err := bullmq.ParseRoutes("store.credentials.verify=stores,*=jobs", "store.credentials.verify=3")
	require.NoError(t, err)
	e := newEnv(t, bullmq.Config{Routes: routes})
	ctx := context.Background()
	verify, sync := message1(model.EventStoreCredentialsVerify, 1), message1(model.EventCatalogSync, 2)
	verify.Destination, verify.OrderingKey = "shopify/shop-1", "catalog/store-1"
	verify.Attempts, verify.CreatedAt = 2, time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	e.publish(t, verify, sync)

	job := e.redis.HGetAll(ctx, e.key("stores", verify.ID.String())).Val()
	assert.Equal(t, model.EventStoreCredentialsVerify, job["name"])
	assert.Equal(t, "3", job["priority"])
	assert.Equal(t, "0", job["delay"])
	ts, err := strconv.ParseInt(job["timestamp"], 10, 64)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), time.UnixMilli(ts), time.Minute)
	var data bullmq.Data
	require.NoError(t, json.Unmarshal([]byte(job["data"]), &data))
	assert.Equal(t, bullmq.Data{
		EventID: verify.ID, WorkspaceID: verify.WorkspaceID, Traceparent: verify.Traceparent,
		Destination: "shopify/shop-1", OrderingKey: "catalog/store-1", JobAttempts: 2, CreatedAt: verify.CreatedAt,
		Payload: verify.Payload,
	}, data)
	assert.Contains(t, job["data"], `"created_at":"2030-01-02T03:04:05.000000006Z"`)
	var syncData map[string]any
	require.NoError(t, json.Unmarshal([]byte(e.redis.HGet(ctx, e.key("jobs", sync.ID.String()), "data").Val()), &syncData))
	assert.NotContains(t, syncData, "destination", "a job without a destination has none in its data")
	assert.NotContains(t, syncData, "ordering_key")
	assert.NotContains(t, syncData, "job_attempts")
	assert.NotContains(t, syncData, "created_at")
	assert.JSONEq(t, `{"jobId":"`+verify.ID.String()+`","attempts":3,"backoff":{"type":"exponential","delay":1000},"priority":3,
		"removeOnComplete":{"age":3600,"count":1000},"removeOnFail":{"age":86400,"count":1000}}`, job["opts"])

	assert.Equal(t, []string{verify.ID.String()}, e.redis.ZRange(ctx, e.key("stores", "prioritized"), 0, -1).Val())
	assert.Zero(t, e.redis.Exists(ctx, e.key("stores", "wait")).Val(), "a prioritized job is not in wait")
	assert.Equal(t, []string{sync.ID.String()}, e.redis.LRange(ctx, e.key("jobs", "wait"), 0, -1).Val())
	assert.Equal(t, "10000", e.redis.HGet(ctx, e.key("jobs", "meta"), "opts.maxLenEvents").Val())
	var events []string
	for _, x := range e.redis.XRange(ctx, e.key("jobs", "events"), "-", "+").Val() {
		events = append(events, x.Values["event"].(string)+" "+x.Values["jobId"].(string))
	}
	assert.Equal(t, []string{"added " + sync.ID.String(), "waiting " + sync.ID.String()}, events)

	w := e.worker(t, bullmqtest.Options{Queues: []string{"stores", "jobs"}})
	w.WaitProcessed(t, wait, verify.ID.String(), sync.ID.String())
	for _, j := range w.Processed() {
		var o struct {
			Attempts int `json:"attempts"`
			Priority int `json:"priority"`
			Backoff  struct {
				Type  string
				Delay int
			}
			RemoveOnComplete struct{ Age, Count int }
		}
		require.NoError(t, json.Unmarshal(j.Opts, &o))
		assert.Equal(t, 3, o.Attempts, "attempts as the worker reads them")
		assert.Equal(t, "exponential", o.Backoff.Type)
		assert.Equal(t, 1000, o.Backoff.Delay)
		assert.Equal(t, 1000, o.RemoveOnComplete.Count)
		switch j.ID {
		case verify.ID.String():
			assert.Equal(t, "stores", j.Queue)
			assert.Equal(t, 3, j.Priority)
		case sync.ID.String():
			assert.Equal(t, "jobs", j.Queue)
			assert.Equal(t, model.EventCatalogSync, j.Name)
			assert.Equal(t, 0, j.Priority)
		}
	}
}

// Publishing an event again (the Dispatcher died before marking it) finds
// its job, waiting or completed, and adds none: the worker sees each job
// id once.
func TestBullMQRepublishIsDeduplicatedByJobID(t *testing.T) {
	routes, err := bullmq.ParseRoutes("", "")
	require.NoError(t, err)
	e := newEnv(t, bullmq.Config{Routes: routes})
	ctx := context.Background()
	q := model.EventStoreCredentialsVerify
	batch := []ports.Message{message1(q, 0), message1(q, 1), message1(q, 2)}
	e.publish(t, batch...)
	e.publish(t, batch...) // still waiting
	assert.Equal(t, int64(len(batch)), e.redis.LLen(ctx, e.key(q, "wait")).Val())

	// One job at a time, oldest first: the sentinel, published last, is
	// processed after anything published before it.
	w := e.worker(t, bullmqtest.Options{Queues: []string{q}})
	w.WaitProcessed(t, wait, ids(batch)...)
	e.publish(t, batch...) // completed, still kept
	sentinel := message1(q, 3)
	e.publish(t, sentinel)
	w.WaitProcessed(t, wait, sentinel.ID.String())

	counts := w.Counts()
	for _, m := range batch {
		assert.Equal(t, 1, counts[m.ID.String()], "job %s processed once", m.ID)
	}
	duplicated := 0
	for _, x := range e.redis.XRange(ctx, e.key(q, "events"), "-", "+").Val() {
		if x.Values["event"] == "duplicated" {
			duplicated++
		}
	}
	assert.Equal(t, 2*len(batch), duplicated, "each republish is a duplicated event")
}

// Attempts and backoff are the Node.js side's retries: BullMQ retries a
// failed first attempt because the job's options say so.
func TestBullMQRetriesByTheJobOptions(t *testing.T) {
	routes, err := bullmq.ParseRoutes("", "")
	require.NoError(t, err)
	opts := jobOptions
	opts.Backoff = 10 * time.Millisecond
	opts.Attempts = 2
	e := newEnv(t, bullmq.Config{Routes: routes, Job: opts})
	q := model.EventMediaProcess
	m := message1(q, 0)
	e.publish(t, m)

	w := e.worker(t, bullmqtest.Options{Queues: []string{q}, FailFirst: true})
	w.WaitProcessed(t, wait, m.ID.String())
	require.Len(t, w.Failed(), 1, "the first attempt failed")
	assert.Equal(t, 1, w.Processed()[0].AttemptsMade, "the second attempt succeeded")
}

// With Attempts 1 a failing job fails for good and is kept for the
// configured age; completed jobs beyond the configured count are removed.
func TestBullMQRetentionBoundsFinishedJobs(t *testing.T) {
	routes, err := bullmq.ParseRoutes("", "")
	require.NoError(t, err)
	opts := jobOptions
	opts.Attempts = 1
	opts.KeepCompleted.Count = 2
	ctx := context.Background()

	e := newEnv(t, bullmq.Config{Routes: routes, Job: opts})
	q := model.EventAITask
	failing := message1(q, 0)
	e.publish(t, failing)
	w := e.worker(t, bullmqtest.Options{Queues: []string{q}, FailFirst: true})
	require.Eventually(t, func() bool { return len(w.Failed()) == 1 }, wait, poll, "the job failed for good")
	assert.Equal(t, []string{failing.ID.String()}, e.redis.ZRange(ctx, e.key(q, "failed"), 0, -1).Val())
	assert.NotEmpty(t, e.redis.HGet(ctx, e.key(q, failing.ID.String()), "failedReason").Val(), "kept for the operators")

	// A second worker process whose jobs succeed at once.
	e2 := newEnv(t, bullmq.Config{Routes: routes, Job: opts})
	batch := []ports.Message{message1(q, 1), message1(q, 2), message1(q, 3), message1(q, 4), message1(q, 5)}
	for _, m := range batch {
		e2.publish(t, m)
	}
	w2 := e2.worker(t, bullmqtest.Options{Queues: []string{q}})
	w2.WaitProcessed(t, wait, ids(batch)...)
	// The worker reports a job processed before BullMQ moves it to
	// completed (and trims): wait for the state the trimming ends in.
	kept := func() int {
		n := 0
		for _, m := range batch {
			n += int(e2.redis.Exists(ctx, e2.key(q, m.ID.String())).Val())
		}
		return n
	}
	require.Eventually(t, func() bool {
		return e2.redis.ZCard(ctx, e2.key(q, "completed")).Val() == 2 && kept() == 2
	}, wait, poll, "completed jobs trimmed to the count, and removed jobs leave no hash behind")
}

// A queue that a real BullMQ Queue of the verified major opened passes;
// another major, or a key of the wrong type, is refused before a job is
// written.
func TestBullMQRefusesAnUnverifiedLayout(t *testing.T) {
	routes, err := bullmq.ParseRoutes("", "")
	require.NoError(t, err)
	e := newEnv(t, bullmq.Config{Routes: routes})
	ctx := context.Background()
	ok, newer, odd := "verified", "newer", "odd"

	e.worker(t, bullmqtest.Options{Queues: []string{ok}, OpenQueues: true})
	version := e.redis.HGet(ctx, e.key(ok, "meta"), "version").Val()
	require.Equal(t, "bullmq:"+bullmq.VerifiedWith, version, "the pinned BullMQ is the verified one")
	require.NoError(t, e.pub.Verify(ctx, ok, "never-used"))

	require.NoError(t, e.redis.HSet(ctx, e.key(newer, "meta"), "version", "bullmq:7.0.0").Err())
	err = e.pub.Verify(ctx, ok, newer)
	require.ErrorIs(t, err, bullmq.ErrUnverifiedLayout)
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable))
	assert.Contains(t, err.Error(), `queue "newer"`)
	assert.Contains(t, err.Error(), "bullmq:7.0.0")
	t.Log(err)

	m := message1("some.event", 0)
	m.Type = newer
	err = e.pub.Publish(ctx, m)
	require.ErrorIs(t, err, bullmq.ErrUnverifiedLayout, "checked on every job too")
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable))
	assert.Zero(t, e.redis.Exists(ctx, e.key(newer, m.ID.String())).Val(), "no job written")

	require.NoError(t, e.redis.Set(ctx, e.key(odd, "wait"), "not a list", 0).Err())
	err = e.pub.Verify(ctx, odd)
	require.ErrorIs(t, err, bullmq.ErrUnverifiedLayout)
	assert.Contains(t, err.Error(), e.key(odd, "wait"))
}

func TestBullMQRefusesMessagesThatCannotBeJobs(t *testing.T) {
	routes, err := bullmq.ParseRoutes("", "")
	require.NoError(t, err)
	e := newEnv(t, bullmq.Config{Routes: routes})
	good := message1("a.b", 0)
	for name, bad := range map[string]func(*ports.Message){
		"no id":          func(m *ports.Message) { m.ID = uuid.Nil },
		"no type":        func(m *ports.Message) { m.Type = "" },
		"bad queue name": func(m *ports.Message) { m.Type = "a:b" },
		"not JSON":       func(m *ports.Message) { m.Payload = []byte("{") },
	} {
		m := message1("a.b", 1)
		bad(&m)
		err := e.pub.Publish(context.Background(), good, m)
		assert.True(t, domain.IsCode(err, domain.CodeValidation), "%s: %v", name, err)
	}
	assert.Zero(t, e.redis.Exists(context.Background(), e.key("a.b", good.ID.String())).Val(), "nothing sent")
}
