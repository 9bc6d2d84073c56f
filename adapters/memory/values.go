package memory

import (
	"bytes"
	"encoding/json"
	"maps"
	"time"

	"github.com/oncehq/once/domain/model"
)

// The helpers below make stored values behave like database rows: times are
// kept in UTC at microsecond precision (timestamptz), and byte slices and
// maps are copied on the way in and out so no caller shares memory with the
// stored row.

func dbTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

// dbTimes keeps each of ts as dbTime does.
func dbTimes(ts ...*time.Time) {
	for _, t := range ts {
		*t = dbTime(*t)
	}
}

func copyWorkspace(w model.Workspace) model.Workspace {
	dbTimes(&w.CreatedAt)
	return w
}

func copyMember(m model.Member) model.Member {
	dbTimes(&m.CreatedAt)
	return m
}

func copyStore(s model.Store) model.Store {
	s.SealedCredentials = bytes.Clone(s.SealedCredentials)
	dbTimes(&s.CreatedAt, &s.UpdatedAt)
	return s
}

func copyOperation(op model.Operation) model.Operation {
	dbTimes(&op.CreatedAt, &op.UpdatedAt)
	return op
}

func copyEvent(e model.OutboxEvent) model.OutboxEvent {
	e.Payload = json.RawMessage(bytes.Clone(e.Payload))
	dbTimes(&e.NextAttemptAt, &e.LockedUntil, &e.CreatedAt, &e.DispatchedAt)
	return e
}

func copyResponse(r model.SavedResponse) model.SavedResponse {
	r.Headers = maps.Clone(r.Headers)
	r.Body = bytes.Clone(r.Body)
	return r
}

func copyRecord(r model.IdempotencyRecord) model.IdempotencyRecord {
	r.Fingerprint = bytes.Clone(r.Fingerprint)
	r.Response = copyResponse(r.Response)
	dbTimes(&r.CreatedAt, &r.CompletedAt, &r.ExpiresAt)
	return r
}

func copyProduct(p model.Product) model.Product {
	p.MediaIDs = cloneOrNil(p.MediaIDs)
	dbTimes(&p.CreatedAt, &p.UpdatedAt)
	return p
}

func copyMedia(m model.Media) model.Media {
	m.Variants = cloneOrNil(m.Variants)
	dbTimes(&m.CreatedAt, &m.UpdatedAt)
	return m
}

// cloneOrNil copies s; an empty list reads back as nil, as an empty SQL
// array or JSON array does from the PostgreSQL adapter.
func cloneOrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append([]T(nil), s...)
}
