// Package queuetest is the contract every queue backend passes: the same
// tests run against the in-process GoChannel, Redis Streams and RabbitMQ.
// Each test works under its own topic prefix, so runs never share streams
// or queues.
package queuetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Event types the contract publishes.
const (
	TypeVerify = "store.credentials.verify"
	TypeSync   = "store.catalog.sync"
)

// wait bounds every delivery the contract waits for.
const wait = 15 * time.Second

// Prefix returns a topic prefix no other test uses.
func Prefix() string { return "test." + watermill.NewShortUUID() + "." }

// Topics lists every topic the contract may use under prefix, for
// backends that clean up after a test.
func Topics(prefix string) []string {
	return []string{
		queue.Topic(prefix, TypeVerify),
		queue.Topic(prefix, TypeSync),
	}
}

// Logger logs to the test's output, warnings and up. Lines logged after
// the test ended (library goroutines winding down after Close) are
// dropped: testing panics on them.
func Logger(t testing.TB) *slog.Logger {
	w := &testWriter{out: t.Output()}
	t.Cleanup(w.stop)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct {
	mu   sync.Mutex
	out  io.Writer
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	return w.out.Write(p)
}

func (w *testWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
}

// newMessage builds a message of eventType with every field set.
func newMessage(eventType string, i int) ports.Message {
	m := ports.Message{
		ID:          uuid.New(),
		Type:        eventType,
		WorkspaceID: uuid.New(),
		Payload:     fmt.Appendf(nil, `{"task_id":%q,"n":%d}`, uuid.NewString(), i),
		Traceparent: "00-" + uuid.New().String()[:8] + "bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}
	// Every other message has no job fields: absent reads back as zero.
	if i%2 == 0 {
		m.Destination, m.OrderingKey = fmt.Sprintf("shopify/shop-%d", i), fmt.Sprintf("catalog/%d", i)
		m.Attempts, m.CreatedAt = i+1, time.Date(2030, 1, 2, 3, 4, 5, 6789+i, time.UTC)
		m.WaitKind, m.WaitedFor = model.JobWaitOutage, "shopify"
	}
	return m
}

// subscription collects what one Subscribe delivers, acknowledging each
// message.
type subscription struct {
	cancel context.CancelFunc
	msgs   <-chan *message.Message
}

func subscribe(t *testing.T, sub message.Subscriber, topic string) *subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	msgs, err := sub.Subscribe(ctx, topic)
	if err != nil {
		cancel()
		t.Fatalf("subscribe %s: %v", topic, err)
	}
	s := &subscription{cancel: cancel, msgs: msgs}
	t.Cleanup(s.stop)
	return s
}

// stop ends the subscription and drains it, nacking what is left so the
// broker keeps it.
func (s *subscription) stop() {
	s.cancel()
	timeout := time.After(wait)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				return
			}
			m.Nack()
		case <-timeout:
			return
		}
	}
}

// take returns the next n messages, each acknowledged as it arrives (a
// broker may hand out the next only then).
func (s *subscription) take(t *testing.T, n int) []*message.Message {
	t.Helper()
	return s.collect(t, n, (*message.Message).Ack)
}

// receive returns the next n messages, neither acked nor nacked.
func (s *subscription) receive(t *testing.T, n int) []*message.Message {
	t.Helper()
	return s.collect(t, n, func(*message.Message) bool { return true })
}

// collect returns the next n messages, passing each to arrived as it
// arrives, failing after wait.
func (s *subscription) collect(t *testing.T, n int, arrived func(*message.Message) bool) []*message.Message {
	t.Helper()
	var got []*message.Message
	timeout := time.After(wait)
	for len(got) < n {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				t.Fatalf("subscription closed after %d of %d messages", len(got), n)
			}
			arrived(m)
			got = append(got, m)
		case <-timeout:
			t.Fatalf("received %d of %d messages within %s", len(got), n, wait)
		}
	}
	return got
}

// quiet fails if a message arrives within d.
func (s *subscription) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		if ok {
			m.Ack()
			t.Errorf("unexpected message %s", m.UUID)
		}
	case <-time.After(d):
	}
}

// checkDelivered checks that got holds exactly want, in any order, each
// once and field for field.
func checkDelivered(t *testing.T, want []ports.Message, got []*message.Message) {
	t.Helper()
	byID := make(map[string]ports.Message, len(want))
	for _, m := range want {
		byID[m.ID.String()] = m
	}
	seen := make(map[string]bool, len(got))
	for _, wm := range got {
		if seen[wm.UUID] {
			t.Errorf("message %s delivered twice", wm.UUID)
			continue
		}
		seen[wm.UUID] = true
		w, ok := byID[wm.UUID]
		if !ok {
			t.Errorf("unexpected message id %q", wm.UUID)
			continue
		}
		g, err := queue.FromMessage(wm)
		if err != nil {
			t.Errorf("message %s: %v", wm.UUID, err)
			continue
		}
		checkMessage(t, w, g)
	}
	for id := range byID {
		if !seen[id] {
			t.Errorf("message %s not delivered", id)
		}
	}
}

func checkMessage(t *testing.T, want, got ports.Message) {
	t.Helper()
	if got.ID != want.ID || got.Type != want.Type || got.WorkspaceID != want.WorkspaceID ||
		got.Traceparent != want.Traceparent || !bytes.Equal(got.Payload, want.Payload) ||
		got.Destination != want.Destination || got.OrderingKey != want.OrderingKey ||
		got.Attempts != want.Attempts || !got.CreatedAt.Equal(want.CreatedAt) || got.WaitKind != want.WaitKind || got.WaitedFor != want.WaitedFor {
		t.Errorf("message %s:\n got  %+v\n want %+v", want.ID, show(got), show(want))
	}
}

func show(m ports.Message) any {
	return struct {
		ID, Type, WorkspaceID, Traceparent, Payload, Destination, OrderingKey, WaitKind, WaitedFor string
		Attempts                                                                                   int
		CreatedAt                                                                                  time.Time
	}{m.ID.String(), m.Type, m.WorkspaceID.String(), m.Traceparent, string(m.Payload), m.Destination, m.OrderingKey,
		string(m.WaitKind), m.WaitedFor, m.Attempts, m.CreatedAt}
}
