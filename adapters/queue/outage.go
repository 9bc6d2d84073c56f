package queue

import (
	"cmp"
	"container/list"
	"maps"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// The slots' policy for a destination that is down: one message per
// workspace and cooldown parked to probe it, the others asleep until a
// call to it is answered (or outageWait), and the wakes.

// sleepers are the messages parked long for a destination that is down,
// as wake needs them: their workspaces (with how many each), and their
// ordering keys.
type sleepers struct {
	down       string
	wait       model.JobWait // what each of them was parked with
	workspaces map[uuid.UUID]int
	keys       map[string]struct{}
	since      time.Time // when the first was parked: calls started before say nothing of the outage
	until      time.Time // the latest of their waits' ends
	// woken is set once a wake took them: one whose park commits after
	// it is woken again (wokenBeforeParked).
	woken atomic.Bool
}

// waitOutage parks t for a destination that is down (its own breaker or
// its platform's, r.Of): the first ticket of each workspace refused in a
// cooldown comes back when the cooldown ends, to be a probe; the others
// sleep for outageWait, and come back as soon as a call to the
// destination is answered, which spares the database and the broker a
// round per ticket per cooldown during a long outage (under mu). Two
// things wake them: this worker's answered call (answered), and, should
// this worker be gone, the workspace's probe itself, whose message says
// what it waited for (answeredAfterWait) wherever it runs.
func (s *slots) waitOutage(t *ticket, r Refusal, now time.Time, next *list.Element) *list.Element {
	down := cmp.Or(r.Of, t.destination)
	wait := waitingFor(down, r.Why)
	probes := s.probeAt[down]
	if probes == nil {
		probes = map[uuid.UUID]time.Time{}
		s.probeAt[down] = probes
	}
	if at, ok := probes[t.workspace]; !ok || at.Before(r.Until) {
		probes[t.workspace] = r.Until
		return s.waitDurably(t, r.Until.Add(rand.N(s.hold)), wait, nil, next)
	}
	z := s.asleep[down]
	if z == nil {
		z = &sleepers{down: down, wait: wait, workspaces: map[uuid.UUID]int{}, keys: map[string]struct{}{}, since: now}
		s.asleep[down] = z
	}
	z.workspaces[t.workspace]++
	if t.key != "" {
		z.keys[t.key] = struct{}{}
	}
	until := now.Add(s.outageWait + rand.N(s.outageWait/10))
	if until.After(z.until) {
		z.until = until
	}
	return s.waitDurably(t, until, wait, z, next)
}

// answered: a call to destination, started at startedAt, was answered,
// so it is up, and so is its platform. The messages parked long for
// either since before the call started are woken, once (under mu): a call
// that started before them and answers late says nothing of now. Their
// keys' later arrivals wait only a hold behind them, and s.woken
// brings them forward in the outbox.
func (s *slots) answered(destination string, startedAt time.Time) {
	platform, _, _ := strings.Cut(destination, "/")
	for _, down := range []string{destination, platform} {
		z := s.asleep[down]
		if z == nil || startedAt.Before(z.since) {
			continue
		}
		delete(s.asleep, down)
		delete(s.probeAt, down)
		z.woken.Store(true)
		now := s.now()
		for ws := range z.workspaces { // their returns need not wake them again
			s.wokenAt[down+"|"+ws.String()] = now
		}
		soon := now.Add(s.hold)
		for key := range z.keys {
			if kl, ok := s.keyWait[key]; ok && kl.until.After(soon) {
				s.keyWait[key] = keyLine{until: soon}
			}
		}
		if s.woken != nil {
			go s.woken(down, z.workspaces)
		}
	}
}

// rewakeAfter is how long after a wake of a workspace's sleepers another
// job that had waited may wake them again: the woken come back by the
// thousand, each having waited for the same outage, and need no second
// wake. It is shorter than a breaker's shortest cooldown (5 s), so the
// probe of an outage that began just after a wake is never taken for one
// of the woken, which would leave the new sleepers asleep.
const rewakeAfter = 2 * time.Second

// answeredAfterWait: a job of workspace, bound for destination, that had
// been parked for a wait of kind waited (ports.Message.WaitKind) reached
// it. If it waited because the destination was down (its breaker, or a
// transient failure's retry: model.JobWaitKind.AfterAnOutage), its
// workspace's jobs asleep for the destination or its platform are woken,
// whatever worker parked them: the wake that survives the worker that
// parked them (a kill -9, a rolling restart), at most once per
// rewakeAfter per destination and workspace.
func (s *slots) answeredAfterWait(workspace uuid.UUID, destination string, waited model.JobWaitKind) {
	if !waited.AfterAnOutage() || s.woken == nil {
		return
	}
	platform, _, _ := strings.Cut(destination, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.wokenAt) >= maxBooked {
		maps.DeleteFunc(s.wokenAt, func(_ string, at time.Time) bool { return now.Sub(at) >= rewakeAfter })
	}
	for _, down := range []string{destination, platform} {
		key := down + "|" + workspace.String()
		if at, ok := s.wokenAt[key]; ok && now.Sub(at) < rewakeAfter {
			continue
		}
		s.wokenAt[key] = now
		go s.woken(down, map[uuid.UUID]int{workspace: 0})
		if platform == destination {
			break
		}
	}
}

// waitingFor is the wait of a message parked for destination's refusal
// why: what the outbox keeps (kind and destination in columns of their
// own, the reason for operators to read), and what Wake matches.
func waitingFor(destination, why string) model.JobWait {
	return model.JobWait{Kind: waitKindOf(why), For: destination, Reason: "waiting for " + destination + ": " + why}
}

// waitKindOf is the kind of wait the destinations' refusal why stands for.
func waitKindOf(why string) model.JobWaitKind {
	switch why {
	case WhyBreakerOpen, WhyProbing:
		return model.JobWaitOutage
	case WhyPaced:
		return model.JobWaitPaced
	case WhyBusy:
		return model.JobWaitBusy
	case WhyPaused:
		return model.JobWaitPaused
	}
	return model.JobWaitStateUnavailable
}
