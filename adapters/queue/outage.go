package queue

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/scheduling"
)

// outages is the slots' policy for a destination that is down: one
// message per workspace and cooldown parked to probe it, the others
// asleep until a call to it is answered (or outageWait), and the wakes,
// which it returns for the caller to start.
type outages struct {
	// outageWait is how long a message parked for a destination that is
	// down waits if nothing wakes it (default 10m).
	outageWait time.Duration
	probeAt    map[string]map[uuid.UUID]time.Time // destinations down: when each workspace's message parked to probe them comes back
	asleep     map[string]*sleepers               // destinations down: the messages parked long for them
	wokenAt    map[string]woke                    // destination and workspace: the last wake of the others
}

// woke is a wake of a workspace's sleepers: when it was started, and ran,
// closed once it has run (see wake).
type woke struct {
	at  time.Time
	ran <-chan struct{}
}

func newOutages() outages {
	return outages{
		outageWait: DefaultOutageWait, probeAt: map[string]map[uuid.UUID]time.Time{},
		asleep: map[string]*sleepers{}, wokenAt: map[string]woke{},
	}
}

// DefaultOutageWait is how long a message parked for a destination that
// is down waits if no answer from it wakes it sooner.
const DefaultOutageWait = 10 * time.Minute

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

// wake is a wake to start: the jobs of workspaces parked for
// destination's outage are due now (see slots.woken). ran is closed once
// it has run (its Wakes committed, or given up on): a job whose answer
// the wake stands for is acknowledged only after (slots.answeredAfterWait).
type wake struct {
	destination string
	workspaces  map[uuid.UUID]int
	ran         chan struct{}
}

func newWake(destination string, workspaces map[uuid.UUID]int) wake {
	return wake{destination: destination, workspaces: workspaces, ran: make(chan struct{})}
}

// park is how a message of workspace with key, bound for destination
// and refused with r because it (its own breaker or its platform's, r.Of)
// is down, is parked at now: the first of each workspace refused in a
// cooldown comes back when the cooldown ends (spread over hold), to be a
// probe; the others sleep for outageWait, and come back as soon as a call
// to the destination is answered (z, their fellow sleepers), which spares
// the database and the broker a round per message per cooldown during a
// long outage. Two things wake them: this worker's answered call
// (answered), and, should this worker be gone, the workspace's probe
// itself, whose message says what it waited for (answeredAfterWait)
// wherever it runs.
func (o *outages) park(workspace uuid.UUID, destination, key string, r Refusal, now time.Time, hold time.Duration) (until time.Time, wait model.JobWait, z *sleepers) {
	down := cmp.Or(r.Of, destination)
	wait = waitingFor(down, r.Why)
	probes := o.probeAt[down]
	if probes == nil {
		probes = map[uuid.UUID]time.Time{}
		o.probeAt[down] = probes
	}
	if at, ok := probes[workspace]; !ok || at.Before(r.Until) {
		probes[workspace] = r.Until
		return r.Until.Add(rand.N(hold)), wait, nil
	}
	z = o.asleep[down]
	if z == nil {
		z = &sleepers{down: down, wait: wait, workspaces: map[uuid.UUID]int{}, keys: map[string]struct{}{}, since: now}
		o.asleep[down] = z
	}
	z.workspaces[workspace]++
	if key != "" {
		z.keys[key] = struct{}{}
	}
	until = now.Add(o.outageWait + rand.N(o.outageWait/10))
	if until.After(z.until) {
		z.until = until
	}
	return until, wait, z
}

// answered: a call to destination, started at startedAt, was answered
// at now, so it is up, and so is its platform. The messages parked long
// for either since before the call started are woken, once: a call that
// started before them and answers late says nothing of now. It returns
// the wakes to start and the ordering keys of those woken, whose later
// arrivals need wait only a hold behind them.
func (o *outages) answered(destination string, startedAt, now time.Time) (wakes []wake, keys []map[string]struct{}) {
	platform, _, _ := strings.Cut(destination, "/")
	for _, down := range []string{destination, platform} {
		z := o.asleep[down]
		if z == nil || startedAt.Before(z.since) {
			continue
		}
		delete(o.asleep, down)
		delete(o.probeAt, down)
		z.woken.Store(true)
		w := newWake(down, z.workspaces)
		for ws := range z.workspaces { // their returns need not wake them again
			o.wokenAt[down+"|"+ws.String()] = woke{at: now, ran: w.ran}
		}
		keys = append(keys, z.keys)
		wakes = append(wakes, w)
	}
	return wakes, keys
}

// rewakeAfter is how long after a wake of a workspace's sleepers another
// job that had waited may wake them again: the woken come back by the
// thousand, each having waited for the same outage, and need no second
// wake. It is shorter than a breaker's shortest cooldown (5 s), so the
// probe of an outage that began just after a wake is never taken for one
// of the woken, which would leave the new sleepers asleep.
const rewakeAfter = 2 * time.Second

// answeredAfterWait: a job of workspace, bound for destination, that had
// been parked for a wait of kind waited for waitedFor
// (ports.Message.WaitKind and WaitedFor) reached it at now. If it waited
// because the destination was down (its breaker, or a transient failure's
// retry: model.JobWaitKind.AfterAnOutage), its workspace's jobs asleep for
// what it waited for are to be woken, whatever worker parked them: the
// wake that survives the worker that parked them (a kill -9, a rolling
// restart), at most once per rewakeAfter per destination and workspace.
// A job that waited for its own destination wakes its platform's too (the
// platform answers); one that waited for its platform wakes only the
// platform's: its shop was not down, and a Wake for the shop would find
// nothing (one per woken job after a platform's outage). It returns the
// wakes to start, and ran: the wakes that stand for this job's answer,
// those started and those it is spared by (perhaps still running), for
// the job's message to wait for before it is acknowledged.
func (o *outages) answeredAfterWait(workspace uuid.UUID, destination string, waited model.JobWaitKind, waitedFor string, now time.Time) (wakes []wake, ran []<-chan struct{}) {
	if !waited.AfterAnOutage() {
		return nil, nil
	}
	platform, _, _ := strings.Cut(destination, "/")
	downs := []string{destination, platform}
	if waitedFor == platform || platform == destination {
		downs = downs[1:]
	}
	if len(o.wokenAt) >= scheduling.MaxBooked {
		maps.DeleteFunc(o.wokenAt, func(_ string, w woke) bool { return now.Sub(w.at) >= rewakeAfter })
	}
	for _, down := range downs {
		key := down + "|" + workspace.String()
		if w, ok := o.wokenAt[key]; ok && now.Sub(w.at) < rewakeAfter {
			ran = append(ran, w.ran)
			continue
		}
		w := newWake(down, map[uuid.UUID]int{workspace: 0})
		o.wokenAt[key] = woke{at: now, ran: w.ran}
		wakes = append(wakes, w)
		ran = append(ran, w.ran)
	}
	return wakes, ran
}

// sweep forgets a workspace's probe turn and a destination's sleepers
// whose waits are over at now (cleared otherwise only when a call to it
// is answered, so never for a dead endpoint or a deleted shop).
func (o *outages) sweep(now time.Time) {
	over := func(at time.Time) bool { return !at.After(now) }
	for down, probes := range o.probeAt {
		maps.DeleteFunc(probes, func(_ uuid.UUID, at time.Time) bool { return over(at) })
		if len(probes) == 0 {
			delete(o.probeAt, down)
		}
	}
	maps.DeleteFunc(o.asleep, func(_ string, z *sleepers) bool { return over(z.until) })
}
