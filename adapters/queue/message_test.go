package queue_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

func TestMessageRoundTrip(t *testing.T) {
	m := ports.Message{
		ID: uuid.New(), Type: "store.credentials.verify", WorkspaceID: uuid.New(),
		Payload: []byte(`{"task_id":"t"}`), Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		Destination: "shopify/shop-1", OrderingKey: "catalog/store-1", Attempts: 3,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), WaitKind: model.JobWaitOutage, WaitedFor: "shopify",
	}
	wm := queue.ToMessage(m)
	if wm.UUID != m.ID.String() {
		t.Errorf("UUID = %q, want the event id", wm.UUID)
	}
	for k, want := range map[string]string{
		queue.MetadataEventType: m.Type, queue.MetadataWorkspaceID: m.WorkspaceID.String(), queue.MetadataTraceparent: m.Traceparent,
		queue.MetadataDestination: "shopify/shop-1", queue.MetadataOrderingKey: "catalog/store-1", queue.MetadataAttempts: "3",
		queue.MetadataCreatedAt: "2026-01-02T03:04:05.123456789Z", queue.MetadataWaitKind: "outage", queue.MetadataWaitedFor: "shopify",
	} {
		if got := wm.Metadata.Get(k); got != want {
			t.Errorf("metadata %s = %q, want %q", k, got, want)
		}
	}
	got, err := queue.FromMessage(wm)
	if err != nil {
		t.Fatal(err)
	}
	want := m
	if string(got.Payload) != string(m.Payload) {
		t.Errorf("payload = %s, want %s", got.Payload, m.Payload)
	}
	got.Payload, want.Payload = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip = %+v, want %+v", got, want)
	}
}

func TestFromMessageReadsAbsentJobFieldsAsZero(t *testing.T) {
	got, err := queue.FromMessage(queue.ToMessage(ports.Message{ID: uuid.New(), Type: "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Destination != "" || got.OrderingKey != "" || got.Attempts != 0 || !got.CreatedAt.IsZero() || got.WaitKind != "" || got.WaitedFor != "" {
		t.Errorf("job fields = %+v, want zero", got)
	}
}

func TestToMessageOmitsUnsetFields(t *testing.T) {
	wm := queue.ToMessage(ports.Message{ID: uuid.New(), Type: "t"})
	if _, ok := wm.Metadata[queue.MetadataTraceparent]; ok {
		t.Error("traceparent set for a message without one")
	}
	for _, k := range []string{queue.MetadataWorkspaceID, queue.MetadataDestination, queue.MetadataOrderingKey, queue.MetadataAttempts, queue.MetadataCreatedAt, queue.MetadataWaitKind, queue.MetadataWaitedFor} {
		if _, ok := wm.Metadata[k]; ok {
			t.Errorf("%s set for a message without one", k)
		}
	}
}

func TestFromMessageRejectsForeignIDs(t *testing.T) {
	bad := message.NewMessage("not-a-uuid", nil)
	if _, err := queue.FromMessage(bad); !domain.IsCode(err, domain.CodeValidation) {
		t.Errorf("bad id: %v, want %s", err, domain.CodeValidation)
	}
	badWS := message.NewMessage(uuid.NewString(), nil)
	badWS.Metadata.Set(queue.MetadataWorkspaceID, "nope")
	if _, err := queue.FromMessage(badWS); !domain.IsCode(err, domain.CodeValidation) {
		t.Errorf("bad workspace: %v, want %s", err, domain.CodeValidation)
	}
	for key, value := range map[string]string{
		queue.MetadataAttempts + " not a number": "three", queue.MetadataAttempts + " negative": "-1",
		queue.MetadataCreatedAt + " not a time": "yesterday",
	} {
		bad := message.NewMessage(uuid.NewString(), nil)
		bad.Metadata.Set(strings.Fields(key)[0], value)
		if _, err := queue.FromMessage(bad); !domain.IsCode(err, domain.CodeValidation) {
			t.Errorf("%s: %v, want %s", key, err, domain.CodeValidation)
		}
	}
}

func TestTopic(t *testing.T) {
	if got := queue.Topic("once.", "store.credentials.verify"); got != "once.store.credentials.verify" {
		t.Errorf("Topic = %q", got)
	}
}
