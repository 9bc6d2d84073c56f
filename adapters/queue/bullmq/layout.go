package bullmq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/domain"
)

// The BullMQ versions whose layout once writes. A BullMQ Queue records its
// library and version in the queue's meta hash ("version" =
// "bullmq:6.7.0"); once writes jobs only into queues whose recorded version
// starts with VerifiedVersionPrefix, or that record none yet (a new queue,
// or one only Workers have opened: they do not write the version).
// VerifiedWith is the version the tests run (testsupport/bullmqtest/node).
const (
	VerifiedVersionPrefix = "bullmq:6."
	VerifiedWith          = "6.7.0"
)

// ErrUnverifiedLayout is matched (errors.Is) by every *LayoutError.
var ErrUnverifiedLayout = errors.New("bullmq: unverified layout")

// LayoutError says that a queue's Redis data is not in the layout once
// writes: set up by another BullMQ version (Found is its meta version), or
// a key of another type (Key and Found name it).
type LayoutError struct {
	Prefix, Queue string
	Key           string // "" for a version mismatch
	Found, Want   string
}

func (e *LayoutError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("bullmq: queue %q (prefix %q): key %s is a %s, not the %s BullMQ keeps there; once refuses to write jobs into it",
			e.Queue, e.Prefix, e.Key, e.Found, e.Want)
	}
	return fmt.Sprintf("bullmq: queue %q (prefix %q) was set up by %s, but once writes the layout of %sx (verified with bullmq %s); "+
		"once refuses to write jobs its workers may not read: run the verified BullMQ major on the Node.js side, or route the event type to another queue",
		e.Queue, e.Prefix, e.Found, VerifiedVersionPrefix, VerifiedWith)
}

func (e *LayoutError) Is(target error) bool { return target == ErrUnverifiedLayout }

// keyTypes are the Redis types BullMQ keeps under a queue's keys, for the
// keys once writes or reads. A key that does not exist yet is fine.
var keyTypes = []struct{ suffix, typ string }{
	{"meta", "hash"},
	{"wait", "list"},
	{"active", "list"},
	{"prioritized", "zset"},
	{"pc", "string"},
	{"marker", "zset"},
	{"events", "stream"},
}

// Verify checks the layout of queues in one pipeline: each queue's meta
// version, and the type of each key once touches. It loads the add script
// first (on a Cluster, on every master), so the first batch needs no second
// round trip. It returns a
// *LayoutError (domain.CodeUnavailable, errors.Is ErrUnverifiedLayout) for
// the first queue that is not in the verified layout, or a
// domain.CodeUnavailable error when Redis does not answer.
func (p *Publisher) Verify(ctx context.Context, queues ...string) error {
	type check struct {
		queue, key, want string
		version          *redis.StringCmd
		typ              *redis.StatusCmd
	}
	// Loaded on its own: on a Cluster, on every master.
	if err := addJob.Load(ctx, p.client).Err(); err != nil {
		return unavailable("bullmq: load the add script", err)
	}
	var checks []check
	_, err := p.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, q := range queues {
			meta := p.cfg.Prefix + ":" + q + ":meta"
			checks = append(checks, check{queue: q, version: pipe.HGet(ctx, meta, "version")})
			for _, k := range keyTypes {
				key := p.cfg.Prefix + ":" + q + ":" + k.suffix
				checks = append(checks, check{queue: q, key: key, want: k.typ, typ: pipe.Type(ctx, key)})
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return unavailable("bullmq: check the queues' layout", err)
	}
	for _, c := range checks {
		var lerr *LayoutError
		switch {
		case c.version != nil:
			if v, err := c.version.Result(); err == nil && !strings.HasPrefix(v, VerifiedVersionPrefix) {
				lerr = &LayoutError{Prefix: p.cfg.Prefix, Queue: c.queue, Found: v}
			}
		default:
			if t := c.typ.Val(); t != "none" && t != c.want {
				lerr = &LayoutError{Prefix: p.cfg.Prefix, Queue: c.queue, Key: c.key, Found: t, Want: c.want}
			}
		}
		if lerr != nil {
			return domain.Wrap(domain.CodeUnavailable, lerr, "bullmq: a queue's layout is unverified")
		}
	}
	return nil
}
