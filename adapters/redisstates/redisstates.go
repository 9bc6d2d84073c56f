// Package redisstates implements ports.DestinationStates in Redis: one
// hash per destination (its version and its state), written by a Lua
// script that compares the version and writes in one step, so of the
// workers racing for a destination's record exactly one wins.
//
// Each record is one key, and the script touches that key only, so it
// runs unchanged on a single node, behind a Sentinel and on a Cluster.
// A record expires (PEXPIRE) when the keep its last write gave runs out,
// or never when that was 0 (a destination paused until resumed must stay
// paused however long nobody calls it).
package redisstates

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// States implements ports.DestinationStates.
type States struct {
	client redis.UniversalClient
	prefix string
}

var _ ports.DestinationStates = (*States)(nil)

// New keeps the records on client, each under prefix and its key. Its
// calls should end with their context (redisconn Config.FollowContext),
// which is how the Gate bounds them.
func New(client redis.UniversalClient, prefix string) *States {
	return &States{client: client, prefix: prefix}
}

// swapScript is the compare-and-set: KEYS[1] is the record, ARGV[1] the
// version the writer read (0: none), ARGV[2] the state to write, ARGV[3]
// its keep in milliseconds (0: for ever). It answers {1, new version,
// state} when it wrote, {0, version, state} as the record is when it did
// not. A missing hash (never written, or expired) is version 0, so the
// first of several first writes wins and the others read its record.
var swapScript = redis.NewScript(`
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then
  return {0, v, redis.call('HGET', KEYS[1], 's') or ''}
end
redis.call('HSET', KEYS[1], 'v', v + 1, 's', ARGV[2])
if tonumber(ARGV[3]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('PERSIST', KEYS[1])
end
return {1, v + 1, ARGV[2]}
`)

// Load implements ports.DestinationStates.
func (s *States) Load(ctx context.Context, key string) (model.DestinationRecord, error) {
	vals, err := s.client.HMGet(ctx, s.prefix+key, "v", "s").Result()
	if err != nil {
		return model.DestinationRecord{}, err
	}
	if vals[0] == nil {
		return model.DestinationRecord{}, nil
	}
	var r model.DestinationRecord
	if _, err := fmt.Sscan(fmt.Sprint(vals[0]), &r.Version); err != nil {
		return model.DestinationRecord{}, fmt.Errorf("redisstates: %s: version %v: %w", key, vals[0], err)
	}
	if state, ok := vals[1].(string); ok {
		r.State = []byte(state)
	}
	return r, nil
}

// Swap implements ports.DestinationStates.
func (s *States) Swap(ctx context.Context, key string, version int64, state []byte, keep time.Duration) (model.DestinationRecord, bool, error) {
	keepMillis := int64(0)
	if keep > 0 {
		keepMillis = max(keep.Milliseconds(), 1)
	}
	res, err := swapScript.Run(ctx, s.client, []string{s.prefix + key}, version, string(state), keepMillis).Slice()
	if err != nil {
		return model.DestinationRecord{}, false, err
	}
	if len(res) != 3 {
		return model.DestinationRecord{}, false, errors.New("redisstates: the swap script answered something else")
	}
	swapped, _ := res[0].(int64)
	v, _ := res[1].(int64)
	text, _ := res[2].(string)
	r := model.DestinationRecord{Version: v}
	if text != "" {
		r.State = []byte(text)
	}
	return r, swapped == 1, nil
}
