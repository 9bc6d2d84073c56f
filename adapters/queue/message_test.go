package queue_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

func TestMessageRoundTrip(t *testing.T) {
	m := ports.Message{
		ID: uuid.New(), Type: "store.credentials.verify", WorkspaceID: uuid.New(),
		Payload: []byte(`{"task_id":"t"}`), Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	}
	wm := queue.ToMessage(m)
	if wm.UUID != m.ID.String() {
		t.Errorf("UUID = %q, want the event id", wm.UUID)
	}
	for k, want := range map[string]string{
		queue.MetadataEventType: m.Type, queue.MetadataWorkspaceID: m.WorkspaceID.String(), queue.MetadataTraceparent: m.Traceparent,
	} {
		if got := wm.Metadata.Get(k); got != want {
			t.Errorf("metadata %s = %q, want %q", k, got, want)
		}
	}
	got, err := queue.FromMessage(wm)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != m.ID || got.Type != m.Type || got.WorkspaceID != m.WorkspaceID || got.Traceparent != m.Traceparent || string(got.Payload) != string(m.Payload) {
		t.Errorf("round trip = %+v, want %+v", got, m)
	}
}

func TestToMessageOmitsUnsetFields(t *testing.T) {
	wm := queue.ToMessage(ports.Message{ID: uuid.New(), Type: "t"})
	if _, ok := wm.Metadata[queue.MetadataTraceparent]; ok {
		t.Error("traceparent set for a message without one")
	}
	if _, ok := wm.Metadata[queue.MetadataWorkspaceID]; ok {
		t.Error("workspace_id set for a message without one")
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
}

func TestTopic(t *testing.T) {
	if got := queue.Topic("once.", "store.credentials.verify"); got != "once.store.credentials.verify" {
		t.Errorf("Topic = %q", got)
	}
}
