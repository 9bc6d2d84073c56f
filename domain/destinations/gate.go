package destinations

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/platformerr"
	"github.com/oncehq/once/ports"
)

// busyHint is how soon a call turned away by the concurrency cap should
// ask again; the caller also asks again when one of the destination's
// permits is done, which is what frees a slot.
const busyHint = 50 * time.Millisecond

// elsewhereRecheck is the longest a call turned away because other
// workers' calls fill the cap waits to ask again: each asking costs a
// read of the record.
const elsewhereRecheck = time.Second

// Why says why Try gave no permit.
type Why string

const (
	// WhyPaced: the destination's rate is spent, or it asked to wait
	// (Retry-After).
	WhyPaced Why = "paced"
	// WhyBusy: the destination has its cap of calls in flight.
	WhyBusy Why = "busy"
	// WhyBreakerOpen: the destination's breaker is open.
	WhyBreakerOpen Why = "breaker_open"
	// WhyProbing: the breaker is half-open and its probe is out.
	WhyProbing Why = "probing"
	// WhyPaused: an operator paused the destination.
	WhyPaused Why = "paused"
	// WhyUnknown: the fleet's state of the destination could not be read
	// or written (ports.DestinationStates failed).
	WhyUnknown Why = "state_unavailable"
)

// Wait is Try's answer when it gives no permit: the earliest time worth
// asking again, and why not now. It is zero when Try grants a permit.
type Wait struct {
	Until time.Time
	Why   Why
	// Of is the destination whose state refused: the one asked for, or
	// its platform (Config.Platforms) when the platform's breaker is open.
	Of model.Destination
	// Every is, for a paced wait, the time between two calls at the
	// fastest the destination's pace goes (its quota, or what it learnt
	// its ceiling to be); for a busy one, between two calls ending at its
	// cap of calls at once, at the calls' usual length (0 before one
	// ended). A caller holding many calls for it can so give each a turn
	// of its own, instead of asking again all at once.
	Every time.Duration
}

// Gate decides, per destination, whether a call may start now, and learns
// from how calls end. What it learns (the pace, the breaker, a pause) it
// keeps in ports.DestinationStates, which every worker of the fleet
// shares, and caches for at most Config.StateTTL; what is only this
// process's (which calls in flight are its own, their usual length, its
// counters) it keeps in memory. It is safe for concurrent use.
//
// A call costs the store at most one write when it starts (a Swap taking
// the call's lease when the destination caps its calls at once, its token
// when it has a rate, the probe's lease when it is half-open: all in the
// one Swap), and otherwise at most one read per destination per
// StateTTL; a Swap that loses a race to another worker reads what won
// and decides again. An outcome writes only when it teaches something or
// gives something back (a call's lease, a 429, a failure, a probe's
// answer, a success while the pace climbs back or a streak of failures
// runs). A call refused because other workers' calls fill the cap reads
// the record again when the refusal says to ask again (busyHint to
// elsewhereRecheck), if the gate read it longer ago than busyHint.
type Gate struct {
	cfg    Config
	clock  ports.Clock
	states ports.DestinationStates
	// id names this gate in the probe and call leases it takes.
	id string

	mu sync.Mutex
	// destinations holds those seen lately; sweep forgets the idle ones.
	destinations map[model.Destination]*destination
	platforms    map[string]*platform
	// records caches the shared state by key, as last read or written.
	records map[string]*record
	probes  uint64
	sweptAt time.Time
}

// record is a cached record of the store: its version, its state, and
// when this gate read it.
type record struct {
	version int64
	state   shared
	readAt  time.Time
}

// destination is what this process keeps for one destination.
type destination struct {
	quota    Quota
	inFlight int
	usedAt   time.Time
	// callTime is how long its calls take (a moving average, from the
	// permit to its Done), 0 before one ended.
	callTime time.Duration
	// recent counts the grants of an unlimited pace, to start its
	// learning from at its first 429.
	recent recentGrants
	// leases names this gate's calls in flight to it, when its quota caps
	// them (see calls).
	leases map[string]struct{}

	pacedWaits, throttles, failures, stateErrors uint64
}

// NewGate returns the gate of cfg, telling time by clock, keeping the
// fleet's state of each destination in states.
func NewGate(cfg Config, clock ports.Clock, states ports.DestinationStates) *Gate {
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Gate{
		cfg: cfg.withDefaults(), clock: clock, states: states, id: hex.EncodeToString(id[:]),
		destinations: map[model.Destination]*destination{}, platforms: map[string]*platform{}, records: map[string]*record{},
	}
}

// Permit is the right to make one call to a destination. End it with Done,
// exactly once.
type Permit struct {
	gate        *Gate
	destination model.Destination
	state       *destination
	own         target
	grant       uint64
	probe       string
	// lease is the call's lease in the destination's record ("": its
	// calls are not capped).
	lease string
	// platform is the destination's platform (nil: none), platformGrant
	// the call's token of the application's bucket, and platformProbe the
	// call's probe name if it is that breaker's probe.
	platform      *platform
	onPlatform    target
	platformGrant uint64
	platformProbe string
	startedAt     time.Time
	done          bool
}

// target is a record of the store and the quota it starts from
// (starting: as a newStartingPace).
type target struct {
	key      string
	quota    Quota
	starting bool
}

// application is the record of a platform as a whole, whose pace is our
// application's bucket: at its configured quota, none if that has no rate
// (a platform whose limits are per account only), or, not configured,
// starting from one account's (newStartingPace).
func (g *Gate) application(system string) target {
	if q, ok := g.cfg.Applications[system]; ok {
		return target{key: system, quota: q}
	}
	return target{key: system, quota: g.cfg.quota(system), starting: true}
}

// Destination is where the permitted call goes.
func (p *Permit) Destination() model.Destination { return p.destination }

// Try asks to start one call to d now. Either a Permit (end it with Done,
// exactly once), or the earliest time worth asking again and why not now.
// A refusal costs nothing: no slot, no token, no probe is held for it.
// When the store cannot be asked, Try refuses for stateRetry (WhyUnknown):
// a pace the fleet shares is not one worker's to guess.
func (g *Gate) Try(d model.Destination) (*Permit, Wait) {
	now := g.clock.Now()
	g.mu.Lock()
	g.sweep(now)
	dest := g.destination(d, now)
	dest.usedAt = now
	plat := g.platform(d, now)
	g.mu.Unlock()

	own := target{key: d.String(), quota: dest.quota}
	onPlatform := g.application(d.System)
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.StateTimeout)
	defer cancel()
	reread := false
	// A destination that caps its calls writes its record with every
	// permit (the call's lease), at the version it decided from: that
	// write checks the record, so the record as cached, however old (or,
	// never read, as unwritten at version 0), is decided from without
	// reading it first (a round trip per call to a
	// destination called less often than once per StateTTL: a shop's
	// jobs a few seconds apart). A refusal from it writes nothing and is
	// checked by a read before it is answered.
	speculate := dest.quota.Concurrency > 0
	// A platform's record is read at every call that does not write it:
	// another worker's failure puts the platform in doubt or opens its
	// breaker, and a call let past it by a cache even StateTTL old is a
	// call into an outage, by every worker, until the caches run out.
	// (A call that writes it, a token of the application's bucket or the
	// probe, is checked by its compare-and-set.)
	platformRead := false
	for try := 0; try < maxSwaps; try++ {
		ownRec, err := g.bounded(ctx, own, now, speculate)
		if err != nil {
			return nil, g.unavailable(dest, d, now)
		}
		var platRec record
		if plat != nil {
			if platRec, err = g.bounded(ctx, onPlatform, now, false); err != nil {
				return nil, g.unavailable(dest, d, now)
			}
		}
		permit, wait, writeOwn, writePlat := g.admit(d, dest, plat, ownRec, platRec, now)
		if speculate && !g.fresh(ownRec, now) && (permit == nil || writeOwn == nil) {
			// Decided from a record not read lately, and nothing written
			// checks it: read it, and decide again (not a race lost).
			g.undo(permit, dest, wait)
			speculate = false
			try--
			continue
		}
		if permit != nil && plat != nil && writePlat == nil && !platformRead {
			g.undo(permit, dest, wait)
			g.forget(onPlatform.key)
			platformRead = true
			try--
			continue
		}
		if permit == nil {
			if wait.Why == WhyBusy && !reread && now.Sub(ownRec.readAt) >= busyHint && g.busyElsewhere(dest) {
				// Other workers' calls fill the cap as this gate last
				// read them: some may have ended since, and nothing
				// tells this gate but the record.
				reread = true
				g.forget(own.key)
				continue
			}
			return nil, wait
		}
		permit.own, permit.onPlatform = own, onPlatform
		if writeOwn != nil {
			swapped, err := g.swap(ctx, own, ownRec.version, *writeOwn, now)
			if err != nil || !swapped {
				permit.cancel()
				if err != nil {
					return nil, g.unavailable(dest, d, now)
				}
				continue
			}
		}
		if writePlat != nil {
			swapped, err := g.swap(ctx, onPlatform, platRec.version, *writePlat, now)
			if err != nil || !swapped {
				permit.cancel()
				if writeOwn != nil {
					// Give back what the call took of its own record, on
					// a context of its own: the Try's may be what ran out.
					back, cancelBack := context.WithTimeout(context.Background(), g.cfg.StateTimeout)
					_ = g.update(back, own, now, func(s *shared) {
						s.pace.refund(permit.grant)
						s.breaker.abandoned(permit.probe)
						s.calls = s.calls.ended(permit.lease)
					})
					cancelBack()
				}
				if err != nil {
					return nil, g.unavailable(dest, d, now)
				}
				continue
			}
		}
		return permit, Wait{}
	}
	// Other workers won every race: they are taking this destination's
	// calls, and it will still be there in a moment.
	return nil, Wait{Until: now.Add(busyHint), Why: WhyBusy, Of: d}
}

// undo takes back what admit did for a decision not answered: the
// permit's slots, or the count of a paced refusal.
func (g *Gate) undo(permit *Permit, dest *destination, wait Wait) {
	if permit != nil {
		permit.cancel()
		return
	}
	if wait.Why == WhyPaced {
		g.mu.Lock()
		dest.pacedWaits--
		g.mu.Unlock()
	}
}

// busyElsewhere: d's cap is not full of this gate's own calls, so a busy
// refusal came from the other workers' leases.
func (g *Gate) busyElsewhere(dest *destination) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return dest.inFlight < dest.quota.Concurrency
}

// forget drops the cached record of key: the next read asks the store.
func (g *Gate) forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.records, key)
}

// maxSwaps bounds the writes one Try or one outcome makes when other
// workers keep winning the race for the same record.
const maxSwaps = 3

// admit decides, from the records as this gate knows them, whether d may
// take a call now. Granted, it returns the permit (its slots reserved)
// and the states to write (nil: nothing to write).
func (g *Gate) admit(d model.Destination, dest *destination, plat *platform, ownRec, platRec record, now time.Time) (*Permit, Wait, *shared, *shared) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := ownRec.state.clone()
	s.settle(now, g.cfg)
	if wait, paused := s.pauseAt(now); paused {
		return nil, wait.of(d), nil, nil
	}
	probe, wait := s.breaker.admits(now)
	if wait.Why != "" {
		return nil, wait.of(d), nil, nil
	}
	var ps shared
	var platformProbe bool
	if plat != nil {
		ps = platRec.state.clone()
		ps.settle(now, g.cfg)
		if platformProbe, wait = ps.platformAdmits(now); wait.Why != "" {
			return nil, wait.of(model.Destination{System: d.System}), nil, nil
		}
	}
	if at := s.pace.readyAt(now); at.After(now) {
		dest.pacedWaits++
		return nil, Wait{Until: at, Why: WhyPaced, Of: d, Every: s.pace.interval()}, nil, nil
	}
	if plat != nil {
		// The application's bucket: every account of the platform spends it.
		if at := ps.pace.readyAt(now); at.After(now) {
			dest.pacedWaits++
			return nil, Wait{Until: at, Why: WhyPaced, Of: model.Destination{System: d.System}, Every: ps.pace.interval()}, nil, nil
		}
	}
	capped := dest.quota.Concurrency > 0
	// The cap counts this gate's calls as it knows them and the other
	// workers' as their leases in the record say.
	if capped && dest.inFlight+s.calls.others(g.id) >= dest.quota.Concurrency {
		every := dest.callTime / time.Duration(dest.quota.Concurrency)
		until := now.Add(busyHint)
		if dest.inFlight < dest.quota.Concurrency {
			// Held by other workers: no Done of this gate's says when
			// one ends, so ask again when one would, at their usual
			// length, reading the record again (Try).
			until = now.Add(min(max(every, busyHint), elsewhereRecheck))
		}
		return nil, Wait{Until: until, Why: WhyBusy, Of: d, Every: every}, nil, nil
	}
	permit := &Permit{gate: g, destination: d, state: dest, platform: plat, startedAt: now}
	var writeOwn, writePlat *shared
	if permit.grant = s.pace.spend(); permit.grant != 0 {
		writeOwn = &s
	} else {
		dest.recent.add(now)
	}
	if capped {
		permit.lease = g.name()
		s.calls = s.calls.started(permit.lease, now.Add(g.cfg.CallLease), g.id, dest.leases)
		if dest.leases == nil {
			dest.leases = map[string]struct{}{}
		}
		dest.leases[permit.lease] = struct{}{}
		writeOwn = &s
	}
	if probe {
		permit.probe = g.name()
		s.breaker.startProbe(permit.probe, now, g.cfg.Breaker.ProbeLease)
		writeOwn = &s
	}
	if plat != nil {
		if permit.platformGrant = ps.pace.spend(); permit.platformGrant != 0 {
			writePlat = &ps
		} else {
			plat.recent.add(now)
		}
	}
	if platformProbe {
		permit.platformProbe = g.name()
		ps.breaker.startProbe(permit.platformProbe, now, g.cfg.Breaker.ProbeLease)
		writePlat = &ps
	}
	dest.inFlight++
	if plat != nil {
		plat.inFlight++
	}
	return permit, Wait{}, writeOwn, writePlat
}

// cancel gives back the slots admit reserved for a permit whose write
// lost its race.
func (p *Permit) cancel() {
	g := p.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	p.done = true
	p.state.inFlight--
	delete(p.state.leases, p.lease)
	if p.platform != nil {
		p.platform.inFlight--
	}
}

// name is a name no other probe or call lease has (under mu).
func (g *Gate) name() string {
	g.probes++
	return g.id + ":" + strconv.FormatUint(g.probes, 10)
}

// unavailable is Try's answer when the store could not be asked.
func (g *Gate) unavailable(dest *destination, d model.Destination, now time.Time) Wait {
	g.mu.Lock()
	dest.stateErrors++
	g.mu.Unlock()
	return Wait{Until: now.Add(stateRetry), Why: WhyUnknown, Of: d}
}

// stateRetry is how soon a call refused because the store could not be
// asked asks again.
const stateRetry = time.Second

// of is w, refused by d's state.
func (w Wait) of(d model.Destination) Wait {
	w.Of = d
	return w
}

// Done reports the call's outcome: it frees the concurrency slot and
// teaches the fleet's state. A second Done of the same permit does
// nothing. What the store could not be told is lost (the destination's
// next outcome teaches it again; a probe's lease runs out).
func (p *Permit) Done(o Outcome) {
	g := p.gate
	now := g.clock.Now()
	g.mu.Lock()
	if p.done {
		g.mu.Unlock()
		return
	}
	p.done = true
	dest := p.state
	dest.inFlight--
	delete(dest.leases, p.lease)
	dest.usedAt = now
	if o.Kind == Succeeded || o.Kind == Throttled {
		dest.timed(now.Sub(p.startedAt))
	}
	switch o.Kind {
	case Throttled:
		dest.throttles++
	case Failed:
		dest.failures++
	}
	recent := dest.recent.perSecond(now)
	var platformRecent float64
	if plat := p.platform; plat != nil {
		plat.inFlight--
		plat.usedAt = now
		platformRecent = plat.recent.perSecond(now)
	}
	// A 429 of the application's quota is the platform's to learn from;
	// the account's own pace is not to blame.
	byApplication := o.Kind == Throttled && o.Scope == platformerr.ScopeApplication && p.platform != nil
	g.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.StateTimeout)
	defer cancel()
	learn := func(s *shared) {
		s.calls = s.calls.ended(p.lease)
		switch o.Kind {
		case Succeeded:
			s.breaker.answered(p.probe)
			s.pace.succeeded(now, p.grant, o.QuotaUsed, o.QuotaLimit)
		case Throttled:
			// A 429 is an answer: the destination is up, only busy.
			s.breaker.answered(p.probe)
			if !byApplication {
				s.pace.throttled(now, p.grant, o.RetryAfter, recent)
			}
		case Failed:
			s.breaker.failed(now, p.probe, g.cfg.Breaker)
		default:
			// No call reached it (our side failed, or the job had
			// nothing to call): the token goes back, the probe to the
			// next caller.
			s.pace.refund(p.grant)
			s.breaker.abandoned(p.probe)
		}
	}
	err := g.update(ctx, p.own, now, learn)
	if errors.Is(err, errContended) && p.lease != "" {
		// A lease left behind holds a slot of the cap from every other
		// worker until it runs out: worth a few more tries.
		err = g.update(ctx, p.own, now, learn)
	}
	if p.platform != nil {
		// Told even when the account's record could not be: the
		// platform's probe lease must not wait out its length.
		err = errors.Join(err, g.update(ctx, p.onPlatform, now, func(s *shared) {
			switch o.Kind {
			case Succeeded:
				s.platformAnswered(p.platformProbe)
				s.pace.succeeded(now, p.platformGrant, 0, 0)
			case Throttled:
				s.platformAnswered(p.platformProbe)
				if byApplication {
					s.pace.throttled(now, p.platformGrant, o.RetryAfter, platformRecent)
				}
			case Failed:
				s.platformFailed(now, p.destination.Account, p.platformProbe, g.cfg.Breaker)
			default:
				s.pace.refund(p.platformGrant)
				s.breaker.abandoned(p.platformProbe)
			}
		}))
	}
	if err != nil {
		g.mu.Lock()
		dest.stateErrors++
		g.mu.Unlock()
	}
}

// recent is t's record: the cached one if it was read within StateTTL,
// or as the store has it now. Speculating, it is the cached one however
// old (fresh says whether it is), for a caller whose decision writes it
// at its version anyway; a record never read is taken to be unwritten
// (version 0, never fresh), which that write checks just as well.
func (g *Gate) recent(ctx context.Context, t target, now time.Time, speculate bool) (record, error) {
	g.mu.Lock()
	cached, ok := g.records[t.key]
	if ok && (speculate || g.fresh(*cached, now)) {
		r := *cached
		g.mu.Unlock()
		return r, nil
	}
	g.mu.Unlock()
	if !ok && speculate {
		return record{state: newShared(t, now)}, nil
	}
	r, err := g.states.Load(ctx, t.key)
	if err != nil {
		return record{}, err
	}
	return g.remember(t, r, now), nil
}

// fresh: rec was read or written within StateTTL (never, if it was not
// read at all).
func (g *Gate) fresh(rec record, now time.Time) bool {
	return !rec.readAt.IsZero() && now.Sub(rec.readAt) < g.cfg.StateTTL && !now.Before(rec.readAt)
}

// bounded is t's record (recent), its times first brought within their
// lengths of now and written so (shared.bound): only a record a clock
// step or a clock ahead left in the future costs that write, and once
// written, the bucket refills from the bound on instead of from it again
// at each read.
func (g *Gate) bounded(ctx context.Context, t target, now time.Time, speculate bool) (record, error) {
	rec, err := g.recent(ctx, t, now, speculate)
	if err != nil {
		return rec, err
	}
	state := rec.state.clone()
	if !state.bound(now, g.cfg) {
		return rec, nil
	}
	if _, err := g.swap(ctx, t, rec.version, state, now); err != nil {
		return rec, err
	}
	// Ours, or what another worker wrote first, as swap cached it; the
	// caller bounds what it reads again before deciding (settle).
	return g.recent(ctx, t, now, false)
}

// remember caches r, the record of t read or written at now.
func (g *Gate) remember(t target, r model.DestinationRecord, now time.Time) record {
	state, ok := decode(r.State)
	if r.Version == 0 || !ok {
		state = newShared(t, now)
	}
	return g.cache(t, record{version: r.Version, state: state, readAt: now})
}

// cache keeps rec as t's record, in the place of the one cached (readers
// copy it under mu), so a job's reads and writes of its records make no
// garbage there.
func (g *Gate) cache(t target, rec record) record {
	g.mu.Lock()
	defer g.mu.Unlock()
	if cached, ok := g.records[t.key]; ok {
		*cached = rec
	} else {
		kept := rec // its own variable: rec's address taken would move rec to the heap at every call
		g.records[t.key] = &kept
	}
	return rec
}

// swap writes state as t's record if it is still at version, caching
// what the store answers: swapped, the store holds state, which is
// cached as written rather than decoded back; lost, what won.
func (g *Gate) swap(ctx context.Context, t target, version int64, state shared, now time.Time) (bool, error) {
	r, swapped, err := g.states.Swap(ctx, t.key, version, state.encode(), state.keep(now))
	if err != nil {
		return false, err
	}
	if swapped {
		g.cache(t, record{version: r.Version, state: state.written(), readAt: now})
	} else {
		g.remember(t, r, now)
	}
	return swapped, nil
}

// update applies learn to t's record and writes it, unless learn changed
// nothing a write must keep; a write that loses its race reads what won
// and learns again from it. It learns first from the record as cached,
// however old (recent's speculate): a write checks the record by its
// compare-and-set anyway, and a call that gives back its lease, or one
// whose outcome teaches something, writes; only when nothing is to be
// written is a record not read lately read, and learnt from again. (A
// busy worker's calls outlast StateTTL, and the read was a round trip
// per job.)
func (g *Gate) update(ctx context.Context, t target, now time.Time, learn func(s *shared)) error {
	speculate := true
	for try := 0; try < maxSwaps; try++ {
		rec, err := g.recent(ctx, t, now, speculate)
		if err != nil {
			return err
		}
		before := rec.state.clone()
		before.settle(now, g.cfg)
		after := before.clone()
		learn(&after)
		after.settle(now, g.cfg)
		if before.same(after) {
			if speculate && !g.fresh(rec, now) {
				speculate = false
				try--
				continue
			}
			return nil
		}
		swapped, err := g.swap(ctx, t, rec.version, after, now)
		if err != nil || swapped {
			return err
		}
	}
	return errContended
}

// errContended: other workers won every race to write a record.
var errContended = errors.New("destinations: other workers kept writing the record first")

// platform is d's platform's local state, made if new; nil if d's system
// is not a platform (Config.Platforms) or d names no account.
func (g *Gate) platform(d model.Destination, now time.Time) *platform {
	if d.Account == "" || !g.cfg.Platforms[d.System] {
		return nil
	}
	plat, ok := g.platforms[d.System]
	if !ok {
		plat = &platform{}
		g.platforms[d.System] = plat
	}
	plat.usedAt = now
	return plat
}

// destination is d's local state, made at its system's quota if d is new.
func (g *Gate) destination(d model.Destination, now time.Time) *destination {
	dest, ok := g.destinations[d]
	if !ok {
		dest = &destination{quota: g.cfg.quota(d.System), usedAt: now}
		g.destinations[d] = dest
	}
	return dest
}

// sweep forgets the destinations idle for cfg.IdleAfter, at most a few
// times per IdleAfter, so a call pays for it rarely and the maps hold only
// the destinations in use (or in trouble, as last seen) lately. What is
// forgotten here stays in the store.
func (g *Gate) sweep(now time.Time) {
	if now.Sub(g.sweptAt) < g.cfg.IdleAfter/4 {
		return
	}
	g.sweptAt = now
	for d, dest := range g.destinations {
		key := d.String()
		if dest.inFlight == 0 && now.Sub(dest.usedAt) >= g.cfg.IdleAfter && !g.troubled(key, now) {
			delete(g.destinations, d)
			delete(g.records, key)
		}
	}
	for system, plat := range g.platforms {
		if plat.inFlight == 0 && now.Sub(plat.usedAt) >= g.cfg.IdleAfter && !g.troubled(system, now) {
			delete(g.platforms, system)
			delete(g.records, system)
		}
	}
}

// troubled: key's cached record has something to remember (under mu).
func (g *Gate) troubled(key string, now time.Time) bool {
	rec, ok := g.records[key]
	if !ok {
		return false
	}
	s := rec.state.clone()
	return s.troubled(now)
}

// timed adds an answered call's length to the destination's average: an
// exponentially weighted one, an eighth per call, so it follows a
// receiver that slows down within a few dozen calls. A failure (a
// timeout) is not a call's usual length and is left out. A sample is
// clamped to at most 4 times the average, so one straggler does not
// multiply the turns of a backlog parked meanwhile, and to at least 0: the
// clock is the wall's, which may step back.
func (d *destination) timed(took time.Duration) {
	took = max(took, 0)
	if d.callTime == 0 {
		d.callTime = took
		return
	}
	took = min(took, 4*d.callTime)
	d.callTime += (took - d.callTime) / 8
}
