package queue_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// recorder is a watermill publisher that records its calls.
type recorder struct {
	mu    sync.Mutex
	calls []call
	fail  map[string]error
}

type call struct {
	topic string
	ids   []string
}

func (r *recorder) Publish(topic string, msgs ...*message.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := call{topic: topic}
	for _, m := range msgs {
		c.ids = append(c.ids, m.UUID)
	}
	r.calls = append(r.calls, c)
	return r.fail[topic]
}

func (r *recorder) Close() error { return nil }

func msg(typ string) ports.Message { return ports.Message{ID: uuid.New(), Type: typ} }

func TestPublisherGroupsByTopic(t *testing.T) {
	rec := &recorder{}
	pub := queue.NewPublisher(rec, "once.")
	a1, b1, a2 := msg("a"), msg("b"), msg("a")
	if err := pub.Publish(context.Background(), a1, b1, a2); err != nil {
		t.Fatal(err)
	}
	want := []call{
		{"once.a", []string{a1.ID.String(), a2.ID.String()}},
		{"once.b", []string{b1.ID.String()}},
	}
	if len(rec.calls) != len(want) {
		t.Fatalf("calls = %+v, want %+v", rec.calls, want)
	}
	for i := range want {
		if rec.calls[i].topic != want[i].topic || strings.Join(rec.calls[i].ids, ",") != strings.Join(want[i].ids, ",") {
			t.Errorf("call %d = %+v, want %+v", i, rec.calls[i], want[i])
		}
	}
}

func TestPublisherWrapsBrokerErrorsSanitized(t *testing.T) {
	rec := &recorder{fail: map[string]error{"once.b": errors.New("dial redis://user:hunter2@cache:6379: refused")}}
	err := queue.NewPublisher(rec, "once.").Publish(context.Background(), msg("a"), msg("b"))
	if !domain.IsCode(err, domain.CodeUnavailable) {
		t.Fatalf("err = %v, want %s", err, domain.CodeUnavailable)
	}
	var de *domain.Error
	if !errors.As(err, &de) || strings.Contains(de.Message, "hunter2") {
		t.Errorf("client-safe message leaks the password: %q", de.Message)
	}
}

// hanging never answers, like a broker whose confirm never comes; like the
// broker sub-packages, it ends its call when the messages' context ends.
type hanging struct{ returned chan struct{} }

func (h hanging) Publish(_ string, msgs ...*message.Message) error {
	defer close(h.returned)
	<-msgs[0].Context().Done()
	return context.Cause(msgs[0].Context())
}
func (h hanging) Close() error { return nil }

// The context reaches the broker call, which runs on the caller's
// goroutine: Publish returns with the deadline and nothing of the call is
// left running.
func TestPublisherHonoursContext(t *testing.T) {
	h := hanging{returned: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := queue.NewPublisher(h, "").Publish(ctx, msg("a"))
	if !domain.IsCode(err, domain.CodeUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want %s wrapping the deadline", err, domain.CodeUnavailable)
	}
	if !errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Errorf("err = %v: a broker that does not answer in time is unreachable", err)
	}
	select {
	case <-h.returned:
	default:
		t.Fatal("Publish returned while the broker call was still running")
	}
}

// A rejection of the messages is not an outage.
func TestPublisherTellsRejectionsFromOutages(t *testing.T) {
	rec := &recorder{fail: map[string]error{"once.a": errors.New("delivery not confirmed for message [x]")}}
	err := queue.NewPublisher(rec, "once.").Publish(context.Background(), msg("a"))
	if !domain.IsCode(err, domain.CodeUnavailable) || errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Fatalf("err = %v, want %s, not unreachable", err, domain.CodeUnavailable)
	}
}
