package postgres

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
)

// Row types: one per table, columns as in sql/001_foundation.sql. Optional
// columns are pointers so that a zero domain value is stored as NULL (and
// an insert of a nil pointer uses the column DEFAULT).

type workspaceRow struct {
	bun.BaseModel `bun:"table:workspaces"`

	ID        uuid.UUID  `bun:"id,pk,type:uuid"`
	Name      string     `bun:"name,notnull"`
	CreatedAt *time.Time `bun:"created_at"`
}

func toWorkspaceRow(w model.Workspace) *workspaceRow {
	return &workspaceRow{ID: w.ID, Name: w.Name, CreatedAt: timePtr(w.CreatedAt)}
}

func (r *workspaceRow) domain() model.Workspace {
	return model.Workspace{ID: r.ID, Name: r.Name, CreatedAt: timeVal(r.CreatedAt)}
}

type memberRow struct {
	bun.BaseModel `bun:"table:workspace_members"`

	WorkspaceID uuid.UUID  `bun:"workspace_id,pk,type:uuid"`
	UserID      uuid.UUID  `bun:"user_id,pk,type:uuid"`
	Role        string     `bun:"role,notnull"`
	CreatedAt   *time.Time `bun:"created_at"`
}

func toMemberRow(m model.Member) *memberRow {
	return &memberRow{WorkspaceID: m.WorkspaceID, UserID: m.UserID, Role: string(m.Role), CreatedAt: timePtr(m.CreatedAt)}
}

func (r *memberRow) domain() model.Member {
	return model.Member{WorkspaceID: r.WorkspaceID, UserID: r.UserID, Role: model.Role(r.Role), CreatedAt: timeVal(r.CreatedAt)}
}

type operationRow struct {
	bun.BaseModel `bun:"table:operations"`

	rowKeys
	Kind         string     `bun:"kind,notnull"`
	Status       string     `bun:"status,notnull"`
	ResourceType string     `bun:"resource_type,notnull"`
	ResourceID   *uuid.UUID `bun:"resource_id,type:uuid"`
	Error        *string    `bun:"error"`
	CreatedBy    uuid.UUID  `bun:"created_by,type:uuid"`
	// CancelRequestedAt is NULL unless a cancel reached the running job.
	CancelRequestedAt *time.Time `bun:"cancel_requested_at"`
	rowTimes
}

func toOperationRow(op model.Operation) *operationRow {
	return &operationRow{
		rowKeys: rowKeys{op.ID, op.WorkspaceID}, Kind: op.Kind, Status: string(op.Status),
		ResourceType: op.ResourceType, ResourceID: uuidPtr(op.ResourceID), Error: strPtr(op.Error),
		CreatedBy: op.CreatedBy, CancelRequestedAt: timePtr(op.CancelRequestedAt),
		rowTimes: toRowTimes(op.CreatedAt, op.UpdatedAt),
	}
}

func (r *operationRow) domain() model.Operation {
	return model.Operation{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Kind: r.Kind, Status: model.OperationStatus(r.Status),
		ResourceType: r.ResourceType, ResourceID: uuidVal(r.ResourceID), Error: strVal(r.Error),
		CreatedBy: r.CreatedBy, CancelRequestedAt: timeVal(r.CancelRequestedAt),
		CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}
}

type storeRow struct {
	bun.BaseModel `bun:"table:stores"`

	rowKeys
	Platform          string `bun:"platform,notnull"`
	Name              string `bun:"name,notnull"`
	ExternalShopID    string `bun:"external_shop_id,notnull"`
	Status            string `bun:"status,notnull"`
	CredentialVersion int    `bun:"credential_version,notnull"`
	SealedCredentials []byte `bun:"sealed_credentials,notnull"`
	rowTimes
}

func toStoreRow(s model.Store) *storeRow {
	sealed := s.SealedCredentials
	if sealed == nil {
		sealed = []byte{}
	}
	return &storeRow{
		rowKeys: rowKeys{s.ID, s.WorkspaceID}, Platform: s.Platform, Name: s.Name,
		ExternalShopID: s.ExternalShopID, Status: string(s.Status), CredentialVersion: s.CredentialVersion,
		SealedCredentials: sealed, rowTimes: toRowTimes(s.CreatedAt, s.UpdatedAt),
	}
}

func (r *storeRow) domain() model.Store {
	return model.Store{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Platform: r.Platform, Name: r.Name,
		ExternalShopID: r.ExternalShopID, Status: model.StoreStatus(r.Status), CredentialVersion: r.CredentialVersion,
		SealedCredentials: r.SealedCredentials, CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}
}

type outboxRow struct {
	bun.BaseModel `bun:"table:outbox_events"`

	rowKeys
	EventType     string          `bun:"event_type,notnull"`
	AggregateType string          `bun:"aggregate_type,notnull"`
	AggregateID   uuid.UUID       `bun:"aggregate_id,type:uuid"`
	EventPayload  json.RawMessage `bun:"event_payload,type:jsonb"`
	Status        string          `bun:"status,notnull"`
	AttemptCount  int             `bun:"attempt_count,notnull"`
	NextAttemptAt *time.Time      `bun:"next_attempt_at"`
	LockedBy      *string         `bun:"locked_by"`
	LockedUntil   *time.Time      `bun:"locked_until"`
	LastError     *string         `bun:"last_error"`
	Traceparent   *string         `bun:"traceparent"`
	CreatedAt     *time.Time      `bun:"created_at"`
	DispatchedAt  *time.Time      `bun:"dispatched_at"`
	Destination   *string         `bun:"destination"`
	OrderingKey   *string         `bun:"ordering_key"`
	JobAttempts   int             `bun:"job_attempts,notnull"`
	// KeySeq is the event's place in its ordering key's commit order
	// (sql/021_ordering_in_the_outbox.sql); Append sets it.
	KeySeq *int64 `bun:"key_seq"`
	// WaitKind and WaitedFor are a parked job's wait
	// (sql/022_job_waits.sql): deferJob sets them.
	WaitKind  *string `bun:"wait_kind"`
	WaitedFor *string `bun:"waited_for"`
	// FailedIn is where a dead letter gave up
	// (sql/024_dead_letter_stage.sql).
	FailedIn *string `bun:"failed_in"`
}

func toOutboxRow(e model.OutboxEvent) *outboxRow {
	status := e.Status
	if status == "" {
		status = model.OutboxPending
	}
	payload := e.Payload
	if len(payload) == 0 {
		payload = json.RawMessage(`{}`)
	}
	return &outboxRow{
		rowKeys: rowKeys{e.ID, e.WorkspaceID}, EventType: e.Type, AggregateType: e.AggregateType,
		AggregateID: e.AggregateID, EventPayload: payload, Status: string(status), AttemptCount: e.AttemptCount,
		NextAttemptAt: timePtr(e.NextAttemptAt), LockedBy: strPtr(e.LockedBy), LockedUntil: timePtr(e.LockedUntil),
		LastError: strPtr(e.LastError), Traceparent: strPtr(e.Traceparent), CreatedAt: timePtr(e.CreatedAt),
		DispatchedAt: timePtr(e.DispatchedAt), Destination: strPtr(e.Destination), OrderingKey: strPtr(e.OrderingKey),
		JobAttempts: e.JobAttempts, WaitKind: strPtr(string(e.WaitKind)), WaitedFor: strPtr(e.WaitedFor),
		FailedIn: strPtr(string(e.FailedIn)),
	}
}

func (r *outboxRow) domain() model.OutboxEvent {
	return model.OutboxEvent{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Type: r.EventType, AggregateType: r.AggregateType,
		AggregateID: r.AggregateID, Payload: r.EventPayload, Status: model.OutboxStatus(r.Status),
		AttemptCount: r.AttemptCount, NextAttemptAt: timeVal(r.NextAttemptAt), LockedBy: strVal(r.LockedBy),
		LockedUntil: timeVal(r.LockedUntil), LastError: strVal(r.LastError), Traceparent: strVal(r.Traceparent),
		CreatedAt: timeVal(r.CreatedAt), DispatchedAt: timeVal(r.DispatchedAt),
		Destination: strVal(r.Destination), OrderingKey: strVal(r.OrderingKey), JobAttempts: r.JobAttempts,
		WaitKind: model.JobWaitKind(strVal(r.WaitKind)), WaitedFor: strVal(r.WaitedFor),
		FailedIn: model.DeadLetterStage(strVal(r.FailedIn)),
	}
}

// rowKeys are the key columns of a table of workspace rows: the row's id
// and the workspace it belongs to (the column row-level security reads).
type rowKeys struct {
	ID          uuid.UUID `bun:"id,pk,type:uuid"`
	WorkspaceID uuid.UUID `bun:"workspace_id,type:uuid"`
}

// rowTimes are when a row was created and last changed.
type rowTimes struct {
	CreatedAt *time.Time `bun:"created_at"`
	UpdatedAt *time.Time `bun:"updated_at"`
}

func toRowTimes(created, updated time.Time) rowTimes {
	return rowTimes{CreatedAt: timePtr(created), UpdatedAt: timePtr(updated)}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func timeVal(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	// pgx hands timestamptz back in time.Local; the domain speaks UTC.
	return t.UTC()
}

func uuidPtr(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func uuidVal(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func strVal(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
