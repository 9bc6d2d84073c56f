package bullmq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/bullmq"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/bullmqtest"
	"github.com/oncehq/once/testsupport/queuetest"
	"github.com/oncehq/once/testsupport/redistest"
)

// wait bounds what the tests wait for from the Node.js worker; poll is how
// often they look.
const (
	wait = 60 * time.Second
	poll = 20 * time.Millisecond
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }

// env is one test's BullMQ world: Redis, a key prefix of its own, and a
// publisher on it.
type env struct {
	url    string
	prefix string
	redis  redis.UniversalClient
	pub    *bullmq.Publisher
}

// newEnv needs the shared Redis and node; cfg's URL and prefix are filled
// in.
func newEnv(t *testing.T, cfg bullmq.Config) *env {
	t.Helper()
	url := bullmqtest.RedisURL()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	queuetest.RequireBroker(t, "Redis", opts.Addr)
	return newEnvOn(t, url, cfg)
}

// newEnvOn is newEnv on the Redis url names.
func newEnvOn(t *testing.T, url string, cfg bullmq.Config) *env {
	t.Helper()
	bullmqtest.Require(t)
	e := &env{url: url, prefix: bullmqtest.Prefix(t, url), redis: bullmqtest.Client(t, url)}
	cfg.URL, cfg.Prefix = url, e.prefix
	if cfg.Job.Attempts == 0 {
		cfg.Job = jobOptions
	}
	var err error
	if e.pub, err = bullmq.New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.pub.Close() })
	return e
}

// jobOptions are the app's defaults, give or take.
var jobOptions = bullmq.JobOptions{
	Attempts:      3,
	Backoff:       time.Second,
	KeepCompleted: bullmq.Retention{Age: time.Hour, Count: 1000},
	KeepFailed:    bullmq.Retention{Age: 24 * time.Hour, Count: 1000},
}

func (e *env) worker(t *testing.T, o bullmqtest.Options) *bullmqtest.Worker {
	o.RedisURL, o.Prefix = e.url, e.prefix
	return bullmqtest.StartWorker(t, o)
}

func (e *env) key(queue, suffix string) string { return e.prefix + ":" + queue + ":" + suffix }

func (e *env) publish(t *testing.T, msgs ...ports.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.pub.Publish(ctx, msgs...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
}

func message1(eventType string, i int) ports.Message {
	return ports.Message{
		ID:          uuid.New(),
		Type:        eventType,
		WorkspaceID: uuid.New(),
		Payload:     fmt.Appendf(nil, `{"task_id":%q,"n":%d}`, uuid.NewString(), i),
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}
}

func ids(msgs []ports.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID.String()
	}
	return out
}

// nodeSubscriber is a watermill subscriber over the stock BullMQ worker,
// for the publisher contract: Subscribe(topic) starts a Node.js Worker on
// the queue the topic's event type is routed to, and hands on each job it
// processed as the message once published.
type nodeSubscriber struct {
	t           *testing.T
	e           *env
	topicPrefix string
	routes      bullmq.Routes
}

func (s *nodeSubscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	eventType, ok := strings.CutPrefix(topic, s.topicPrefix)
	if !ok {
		return nil, fmt.Errorf("topic %q is not under %q", topic, s.topicPrefix)
	}
	w := s.e.worker(s.t, bullmqtest.Options{Queues: []string{s.routes.Queue(eventType)}, Concurrency: 4})
	out := make(chan *message.Message)
	go func() {
		defer close(out)
		for j := range w.Stream(ctx) {
			select {
			case out <- toMessage(s.t, j):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (s *nodeSubscriber) Close() error { return nil }

// toMessage maps what the Node.js worker saw back to the published message:
// the job id and name, and the job data's fields.
func toMessage(t *testing.T, j bullmqtest.Job) *message.Message {
	var d bullmq.Data
	if err := json.Unmarshal(j.Data, &d); err != nil {
		t.Errorf("job %s: data %s: %v", j.ID, j.Data, err)
	}
	if d.EventID.String() != j.ID {
		t.Errorf("job %s: data names event %s", j.ID, d.EventID)
	}
	var payload []byte
	if !bytes.Equal(d.Payload, []byte("null")) {
		payload = d.Payload
	}
	// The message as the queue adapter carries it, from the job data's
	// fields; the job id stays as the worker saw it.
	m := queue.ToMessage(ports.Message{
		Type: j.Name, WorkspaceID: d.WorkspaceID, Payload: payload, Traceparent: d.Traceparent,
		Destination: d.Destination, OrderingKey: d.OrderingKey, Attempts: d.JobAttempts, CreatedAt: d.CreatedAt,
		WaitKind: model.JobWaitKind(d.WaitKind), WaitedFor: d.WaitedFor,
	})
	m.UUID = j.ID
	return m
}
