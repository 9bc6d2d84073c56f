package redisstream_test

import (
	"context"
	"testing"

	wmredis "github.com/ThreeDotsLabs/watermill-redisstream/pkg/redisstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue/redisstream"
	"github.com/oncehq/once/testsupport/queuetest"
)

// A publish of many messages is one pipeline of XADDs: every message is in
// the stream, in the order given, as watermill's marshaller writes it (so
// its subscriber reads them), and the call returns only once Redis answered.
func TestAPublishOfManyIsEveryMessageInOrder(t *testing.T) {
	onEachTopology(t, publishOfManyIsEveryMessageInOrder)
}

func publishOfManyIsEveryMessageInOrder(t *testing.T, url string) {
	pub, err := redisstream.NewPublisher(redisstream.Config{URL: url}, queuetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pub.Close() })
	stream := "once-test-pipeline-" + uuid.NewString()
	cleanupStreams(t, url, stream)

	msgs := make([]*message.Message, 250)
	for i := range msgs {
		msgs[i] = message.NewMessage(uuid.NewString(), []byte(`{"n":1}`))
		msgs[i].Metadata.Set("event_type", "test.event")
	}
	if err := pub.Publish(stream, msgs...); err != nil {
		t.Fatal(err)
	}
	entries, err := client(t, url).XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(msgs) {
		t.Fatalf("%d entries, want %d", len(entries), len(msgs))
	}
	for i, e := range entries {
		got, err := wmredis.DefaultMarshallerUnmarshaller{}.Unmarshal(e.Values)
		if err != nil {
			t.Fatal(err)
		}
		if got.UUID != msgs[i].UUID || string(got.Payload) != `{"n":1}` || got.Metadata.Get("event_type") != "test.event" {
			t.Fatalf("entry %d: %s %q %v, want message %s", i, got.UUID, got.Payload, got.Metadata, msgs[i].UUID)
		}
	}
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(stream, msgs[0]); err == nil {
		t.Fatal("a closed publisher published")
	}
}
