package model

import (
	"context"
	"strconv"
	"sync"

	"github.com/google/uuid"
)

// A job's calls to an external system with a side effect (a verification,
// a listing, a billed generation) carry a request token, which the system
// executes once and answers again with the first outcome. The token must be
// the same for every execution of one intended call, and differ between
// intended calls:
//
//   - a redelivery of the job, or its re-drive after it was given up on,
//     runs the same payload: the token is in the payload (JobOperation);
//   - the request that started the job may itself run twice: its first
//     commit acknowledged, then lost in a failover to a standby that never
//     received it (asynchronous replication), and the client's retry with
//     the same Idempotency-Key finds no record and executes again, with new
//     row ids. So the token derives from the request's idempotency scope
//     (workspace, user, method, normalized path, key), which the retry
//     shares, not from a row id, which it does not: the platform
//     recognises the second execution as the same call;
//   - any other request (another key, another path: a replaced
//     authorization, a new verification, another store) has another scope,
//     so another token: its call is executed, not answered with the verdict
//     of an earlier one.
//
// The idempotency service puts the scope's RequestOrigin in the context of
// the work it runs (WithRequestOrigin); NewJob derives the token of each job
// the request starts from it and the job's event type (and its ordinal,
// should one request start two jobs of one type). A job started outside an
// idempotent request has no token in its payload; its handler falls back to
// the row id it always used (JobOperation.TokenOr), as do payloads written
// before tokens were.

// requestOrigin is the origin of the request running in a context, and
// how many jobs of each event type it started so far.
type requestOrigin struct {
	id   uuid.UUID
	mu   sync.Mutex
	jobs map[string]int
}

type requestOriginKey struct{}

// WithRequestOrigin returns ctx for running one execution of the request
// whose origin (a name for its idempotency scope, never the key in clear)
// is origin: the jobs it starts get tokens derived from it.
func WithRequestOrigin(ctx context.Context, origin uuid.UUID) context.Context {
	return context.WithValue(ctx, requestOriginKey{}, &requestOrigin{id: origin, jobs: map[string]int{}})
}

// jobToken is the request token of the next job of eventType the request
// running in ctx starts, empty outside such a request.
func jobToken(ctx context.Context, eventType string) string {
	o, ok := ctx.Value(requestOriginKey{}).(*requestOrigin)
	if !ok {
		return ""
	}
	o.mu.Lock()
	n := o.jobs[eventType]
	o.jobs[eventType]++
	o.mu.Unlock()
	name := eventType
	if n > 0 {
		name += "#" + strconv.Itoa(n)
	}
	return uuid.NewSHA1(o.id, []byte(name)).String()
}
