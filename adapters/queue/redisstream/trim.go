package redisstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Trimmer keeps streams bounded without ever dropping a message a consumer
// group has not acknowledged. XADD keeps every entry, acknowledged or not,
// so without it a stream grows by every event ever published.
//
// The rule, per stream: an entry may go once every consumer group of the
// stream is done with it, that is, once it lies below, for each group,
//   - the oldest entry of its pending list (delivered, not yet
//     acknowledged; a dead consumer's pending entries are claimed by a live
//     one later, so they must stay readable), and
//   - the entry after its last-delivered-id (everything after that is not
//     delivered yet).
//
// The stream is trimmed exactly to the lowest of those ids (XTRIM MINID).
// A stream without any group is left alone: nobody has read it, and the
// group that will (created from "0") needs every entry. Both bounds only
// ever move forward (a group's last-delivered-id grows, entries leave the
// pending list only when acknowledged, and new pending entries come from
// above the last-delivered-id), so reading them and then trimming is safe
// without a lock. The one thing it cannot guard is a group created later
// from "0", or moved back with XGROUP SETID: it starts from the oldest
// entry left.
type Trimmer struct {
	client  redis.UniversalClient
	streams []string
}

// NewTrimmer returns a Trimmer of the given streams, with its own Redis
// client, closed by Close.
func NewTrimmer(cfg Config, streams []string) (*Trimmer, error) {
	client, err := cfg.client()
	if err != nil {
		return nil, err
	}
	return &Trimmer{client: client, streams: streams}, nil
}

// Close closes the Trimmer's Redis client.
func (t *Trimmer) Close() error { return t.client.Close() }

// RunOnce trims every stream and returns how many entries were removed. A
// failure on one stream does not stop the others; the failures are
// returned together.
func (t *Trimmer) RunOnce(ctx context.Context) (int, error) {
	var total int64
	var errs []error
	for _, stream := range t.streams {
		n, err := t.Trim(ctx, stream)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("redisstream: trim %s: %w", stream, err))
		}
	}
	return int(total), errors.Join(errs...)
}

// Trim trims one stream by the rule above and returns how many entries
// were removed.
func (t *Trimmer) Trim(ctx context.Context, stream string) (int64, error) {
	floor, ok, err := t.floor(ctx, stream)
	if err != nil || !ok {
		return 0, err
	}
	return t.client.XTrimMinID(ctx, stream, floor.String()).Result()
}

// floor is the lowest id some consumer group of stream still needs; ok is
// false when the stream does not exist or has no group.
func (t *Trimmer) floor(ctx context.Context, stream string) (floor streamID, ok bool, err error) {
	groups, err := t.client.XInfoGroups(ctx, stream).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return floor, false, nil
		}
		return floor, false, err
	}
	for i, g := range groups {
		delivered, err := parseStreamID(g.LastDeliveredID)
		if err != nil {
			return floor, false, err
		}
		need := delivered.next()
		pending, err := t.client.XPending(ctx, stream, g.Name).Result()
		if err != nil {
			return floor, false, err
		}
		if pending.Count > 0 {
			oldest, err := parseStreamID(pending.Lower)
			if err != nil {
				return floor, false, err
			}
			need = lower(need, oldest)
		}
		if i == 0 {
			floor = need
		}
		floor = lower(floor, need)
	}
	return floor, len(groups) > 0, nil
}

// streamID is a stream entry id, <milliseconds>-<sequence>, comparable in
// stream order with <.
type streamID struct{ ms, seq uint64 }

func parseStreamID(s string) (streamID, error) {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok {
		return streamID{}, fmt.Errorf("stream id %q: no sequence", s)
	}
	var id streamID
	var err1, err2 error
	id.ms, err1 = strconv.ParseUint(ms, 10, 64)
	id.seq, err2 = strconv.ParseUint(seq, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return streamID{}, fmt.Errorf("stream id %q: %w", s, err)
	}
	return id, nil
}

// next is the smallest id after id.
func (id streamID) next() streamID {
	if id.seq == ^uint64(0) {
		return streamID{ms: id.ms + 1}
	}
	return streamID{ms: id.ms, seq: id.seq + 1}
}

func (id streamID) String() string { return fmt.Sprintf("%d-%d", id.ms, id.seq) }

// lower is the earlier of two ids in stream order.
func lower(a, b streamID) streamID {
	if b.ms < a.ms || b.ms == a.ms && b.seq < a.seq {
		return b
	}
	return a
}
