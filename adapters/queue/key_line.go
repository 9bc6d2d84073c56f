package queue

import (
	"container/list"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// keyLines is the order of each ordering key: of the messages with one
// key, only the first to arrive may start, and only once none of the key
// runs; a key whose line was parked durably parks its later arrivals
// behind it while the wait lasts.
type keyLines struct {
	keys    map[string]*list.List // each ordering key's waiting tickets and reservations, in arrival order
	keyWait map[string]keyLine    // keys whose line was parked: later arrivals wait behind it
	busy    map[string]bool       // ordering keys with a job running
}

func newKeyLines() keyLines {
	return keyLines{keys: map[string]*list.List{}, keyWait: map[string]keyLine{}, busy: map[string]bool{}}
}

// keyLine is an ordering key whose line was parked: its later arrivals
// are parked behind it, until then.
type keyLine struct {
	until time.Time
	// asleep, if the line sleeps through its destination's outage, is
	// its fellow sleepers.
	asleep *sleepers
}

// join puts t at the end of its key's line.
func (k *keyLines) join(t *ticket) {
	l := k.keys[t.key]
	if l == nil {
		l = list.New()
		k.keys[t.key] = l
	}
	t.inKey = l.PushBack(t)
}

// leave takes t out of its key's line.
func (k *keyLines) leave(t *ticket) {
	l := k.keys[t.key]
	l.Remove(t.inKey)
	t.inKey = nil
	if l.Len() == 0 {
		delete(k.keys, t.key)
	}
}

// mayStart: t has no key, or is its key's first and none of the key runs.
func (k *keyLines) mayStart(t *ticket) bool {
	return t.key == "" || (!k.busy[t.key] && k.keys[t.key].Front().Value == t)
}

// started marks key as running ("" : none).
func (k *keyLines) started(key string) {
	if key != "" {
		k.busy[key] = true
	}
}

// ended marks key as running no more ("" : none).
func (k *keyLines) ended(key string) {
	if key != "" {
		delete(k.busy, key)
	}
}

// behindParked is the wait of a later arrival of key, of workspace, if
// the key's line is parked at now (nil: it is not, or no longer).
func (k *keyLines) behindParked(key string, workspace uuid.UUID, now time.Time) *waitFor {
	kl, ok := k.keyWait[key]
	if !ok {
		return nil
	}
	if !now.Before(kl.until) {
		delete(k.keyWait, key)
		return nil
	}
	kl.until = kl.until.Add(time.Microsecond)
	k.keyWait[key] = kl
	return kl.behind(workspace)
}

// line is key's line, its first ticket first, as it is parked.
func (k *keyLines) line(key string) []*ticket {
	var line []*ticket
	for e := k.keys[key].Front(); e != nil; e = e.Next() {
		line = append(line, e.Value.(*ticket))
	}
	return line
}

// parked notes that key's line is parked until then (z: asleep with
// them), so its later arrivals wait behind it.
func (k *keyLines) parked(key string, until time.Time, z *sleepers) {
	k.keyWait[key] = keyLine{until: until, asleep: z}
}

// woken cuts the wait of the keys' later arrivals to soon: their lines
// were woken, and come back.
func (k *keyLines) woken(keys map[string]struct{}, soon time.Time) {
	for key := range keys {
		if kl, ok := k.keyWait[key]; ok && kl.until.After(soon) {
			k.keyWait[key] = keyLine{until: soon}
		}
	}
}

// sweep forgets the parked lines whose wait is over (cleared otherwise
// only when a later message of the key arrives).
func (k *keyLines) sweep(now time.Time) {
	maps.DeleteFunc(k.keyWait, func(_ string, kl keyLine) bool { return !kl.until.After(now) })
}

// behindAnEarlierJob is the wait of a later arrival behind a parked line.
var behindAnEarlierJob = model.JobWait{Kind: model.JobWaitOrdering, Reason: "waiting behind an earlier job of its ordering key"}

// behind is the wait of a later arrival of the key, of workspace (under
// the slots' mu): behind the line, and, if the line sleeps through an
// outage, with it, so the wake that brings the line back brings it back
// too (with a wait of its own it would match no wake, and sleep the full
// outage wait).
func (kl keyLine) behind(workspace uuid.UUID) *waitFor {
	if z := kl.asleep; z != nil && !z.woken.Load() {
		z.workspaces[workspace]++ // its workspace's Wake brings it back
		return &waitFor{until: kl.until, wait: z.wait, asleep: z}
	}
	return &waitFor{until: kl.until, wait: behindAnEarlierJob}
}
