package bullmq

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// JobOptions are the BullMQ job options once sets on every job. They are
// read by the Node.js worker, never by once: how often it tries a job, how
// long it waits between tries, and how long finished jobs stay in Redis.
type JobOptions struct {
	// Attempts is how many times a worker tries a job before it fails
	// for good (BullMQ "attempts", at least 1).
	Attempts int
	// Backoff is the first wait before a retry, doubled on each further
	// one (BullMQ "backoff" of type "exponential"); 0 retries at once.
	Backoff time.Duration
	// KeepCompleted and KeepFailed bound the finished jobs kept in Redis
	// (BullMQ "removeOnComplete" / "removeOnFail" with age and count).
	// A republished event is deduplicated only while its first job is
	// still kept, so KeepCompleted must outlast a Dispatcher lease.
	KeepCompleted, KeepFailed Retention
}

// Retention keeps finished jobs up to Age and at most Count of them per
// queue, whichever removes more; BullMQ removes the rest when jobs finish.
type Retention struct {
	Age   time.Duration
	Count int
}

// Data is the job data of an outbox event (BullMQ "data", a JSON object):
// the event's payload as written by the use case, and the ids a worker
// needs to act under row-level security and to join the request's trace.
// Destination and OrderingKey (absent when the job has none) let a Node.js
// worker group its jobs and pace them per destination (BullMQ's rate
// limiter, or its groups), and run one ordering key's jobs one at a time.
// JobAttempts and CreatedAt are the message's Attempts and CreatedAt
// (absent when zero): the runs that failed by the job's own fault before
// this publish (named apart from BullMQ's own attempts), and when the
// event was committed, for a deadline counted from it. WaitKind and
// WaitedFor are, for a job our worker once parked, why and for which
// destination it waited (ports.Message.WaitKind, WaitedFor).
type Data struct {
	EventID     uuid.UUID       `json:"event_id"`
	WorkspaceID uuid.UUID       `json:"workspace_id"`
	Traceparent string          `json:"traceparent,omitempty"`
	Destination string          `json:"destination,omitempty"`
	OrderingKey string          `json:"ordering_key,omitempty"`
	JobAttempts int             `json:"job_attempts,omitempty"`
	CreatedAt   time.Time       `json:"created_at,omitzero"`
	WaitKind    string          `json:"wait_kind,omitempty"`
	WaitedFor   string          `json:"waited_for,omitempty"`
	Payload     json.RawMessage `json:"payload"`
}

// opts is the "opts" field of the job hash, in the JSON shape BullMQ's
// Job reads it (the long option names; jobId as a Queue.add would store it).
type opts struct {
	JobID            string   `json:"jobId"`
	Attempts         int      `json:"attempts"`
	Backoff          *backoff `json:"backoff,omitempty"`
	Priority         int      `json:"priority,omitempty"`
	RemoveOnComplete keepJobs `json:"removeOnComplete"`
	RemoveOnFail     keepJobs `json:"removeOnFail"`
}

type backoff struct {
	Type  string `json:"type"`
	Delay int64  `json:"delay"` // milliseconds
}

type keepJobs struct {
	Age   int64 `json:"age"` // seconds
	Count int   `json:"count"`
}

// job is one job ready for the add script.
type job struct {
	id, name, queue string
	data, opts      []byte
	priority        int
}

// newJob encodes m as a job of queue at priority. Errors are
// domain.CodeValidation: the message can never become a job.
func newJob(m ports.Message, queue string, priority int, o JobOptions) (job, error) {
	if m.ID == uuid.Nil || m.Type == "" {
		return job{}, domain.Errorf(domain.CodeValidation, "bullmq: message %s has no id or no event type", m.ID)
	}
	if err := checkQueueName(queue); err != nil {
		return job{}, domain.Wrap(domain.CodeValidation, err, fmt.Sprintf("bullmq: event type %q needs a queue mapping", m.Type))
	}
	payload := json.RawMessage(m.Payload)
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	if !json.Valid(payload) {
		return job{}, domain.Errorf(domain.CodeValidation, "bullmq: message %s: payload is not JSON", m.ID)
	}
	data, err := json.Marshal(Data{
		EventID: m.ID, WorkspaceID: m.WorkspaceID, Traceparent: m.Traceparent,
		Destination: m.Destination, OrderingKey: m.OrderingKey, JobAttempts: m.Attempts, CreatedAt: m.CreatedAt.UTC(),
		WaitKind: string(m.WaitKind), WaitedFor: m.WaitedFor, Payload: payload,
	})
	if err != nil {
		return job{}, domain.Wrap(domain.CodeValidation, err, "bullmq: job data cannot be encoded")
	}
	jo := opts{
		JobID:            m.ID.String(),
		Attempts:         max(o.Attempts, 1),
		Priority:         priority,
		RemoveOnComplete: keep(o.KeepCompleted),
		RemoveOnFail:     keep(o.KeepFailed),
	}
	if o.Backoff > 0 {
		jo.Backoff = &backoff{Type: "exponential", Delay: o.Backoff.Milliseconds()}
	}
	encoded, err := json.Marshal(jo)
	if err != nil {
		return job{}, domain.Wrap(domain.CodeInternal, err, "bullmq: job options cannot be encoded")
	}
	return job{id: m.ID.String(), name: m.Type, queue: queue, data: data, opts: encoded, priority: priority}, nil
}

func keep(r Retention) keepJobs {
	return keepJobs{Age: int64(r.Age / time.Second), Count: r.Count}
}
