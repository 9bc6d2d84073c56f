package queue_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/ports"
)

// batches is a ports.Publisher that records each Publish call's ids.
type batches struct {
	calls [][]string
	fail  error
}

func (b *batches) Publish(_ context.Context, msgs ...ports.Message) error {
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID.String())
	}
	b.calls = append(b.calls, ids)
	return b.fail
}

func ids(msgs ...ports.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.ID.String())
	}
	return out
}

// Each routed type reaches its own publisher, every other type the
// default, one call each, in batch order.
func TestByTypeRoutesEachTypeToItsPublisher(t *testing.T) {
	other, own := &batches{}, &batches{}
	pub := queue.NewByType(other, map[string]ports.Publisher{"webhook.deliver": own})
	a1, w1, b1, w2 := msg("a"), msg("webhook.deliver"), msg("b"), msg("webhook.deliver")
	if err := pub.Publish(context.Background(), a1, w1, b1, w2); err != nil {
		t.Fatal(err)
	}
	if want := [][]string{ids(a1, b1)}; !slices.EqualFunc(other.calls, want, slices.Equal) {
		t.Errorf("default publisher got %v, want %v", other.calls, want)
	}
	if want := [][]string{ids(w1, w2)}; !slices.EqualFunc(own.calls, want, slices.Equal) {
		t.Errorf("routed publisher got %v, want %v", own.calls, want)
	}
}

// A failing publisher's error comes back as it is, so the Dispatcher still
// tells an outage from a rejection; nothing else is tried.
func TestByTypeReturnsTheFirstErrorAsIs(t *testing.T) {
	down := &batches{fail: ports.ErrBrokerUnreachable}
	other := &batches{}
	pub := queue.NewByType(other, map[string]ports.Publisher{"webhook.deliver": down})
	err := pub.Publish(context.Background(), msg("webhook.deliver"), msg("a"))
	if !errors.Is(err, ports.ErrBrokerUnreachable) {
		t.Fatalf("err = %v, want the routed publisher's", err)
	}
	if len(other.calls) != 0 {
		t.Errorf("published after a failure: %v", other.calls)
	}
}
