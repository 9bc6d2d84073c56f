package destinations

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wire is s in the record's format: what encode writes, as json.Marshal
// writes it.
func (s shared) wire() sharedWire {
	p, b := s.pace, s.breaker
	return sharedWire{
		Unpaced: p.unpaced, Ceiling: p.ceiling, Met: p.met, Starting: p.starting, Rate: p.rate, Burst: p.burst, Tokens: p.tokens,
		FilledAt: p.filledAt, BlockedUntil: p.blockedUntil, BlockedFor: p.blockedFor, Grants: p.grants, SlowedAt: p.slowedAt, SlowedTime: p.slowedTime,
		Failures: b.failures, Open: b.open, OpenUntil: b.openUntil, Cooldown: b.cooldown,
		ProbeBy: b.probeBy, ProbeUntil: b.probeUntil, Accounts: s.accounts,
		Paused: s.paused, PausedUntil: s.pausedUntil, Calls: s.calls.wire(),
	}
}

// TestEncodeIsTheWire: encode writes what json.Marshal writes of the
// record's format, byte for byte, whatever the state: the record is read
// by every worker of every version deployed at once.
func TestEncodeIsTheWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	strs := []string{"", "shop-1", "9f86d081:12", "<a&b>", `quo"te\`, "caf\u00e9", "\x00ctl", "\xff\xfebad", "\u2028", "emoji \U0001F600"}
	floats := []float64{0, math.Copysign(0, -1), 1, -2.5, 0.1, 1e-7, 3.2e-9, 1e21, 1.5e300, 123456789.123, 1e-6, 9.99e20, math.SmallestNonzeroFloat64}
	zones := []*time.Location{time.UTC, time.FixedZone("ahead", 5*3600+1800), time.FixedZone("behind", -7*3600), time.Local}
	pick := func(n int) int { return rng.IntN(n) }
	moment := func() time.Time {
		if pick(3) == 0 {
			return time.Time{}
		}
		at := time.Unix(int64(1.7e9)+rng.Int64N(1e8), rng.Int64N(1e9)).In(zones[pick(len(zones))])
		if pick(2) == 0 {
			at = at.Truncate(time.Second)
		}
		return at
	}
	for range 2000 {
		w := sharedWire{
			Unpaced: pick(2) == 0, Ceiling: floats[pick(len(floats))], Met: floats[pick(len(floats))], Starting: pick(2) == 0,
			Rate: floats[pick(len(floats))], Burst: floats[pick(len(floats))], Tokens: floats[pick(len(floats))],
			FilledAt: moment(), BlockedUntil: moment(), BlockedFor: time.Duration(rng.Int64N(1e12) - 1e11),
			Grants: rng.Uint64() >> uint(pick(64)), SlowedAt: uint64(pick(3)), SlowedTime: moment(),
			Failures: pick(4) - 1, Open: pick(2) == 0, OpenUntil: moment(), Cooldown: time.Duration(pick(3)) * time.Second,
			ProbeBy: strs[pick(len(strs))], ProbeUntil: moment(), Paused: pick(2) == 0, PausedUntil: moment(),
		}
		for range pick(4) {
			w.Accounts = append(w.Accounts, strs[pick(len(strs))])
		}
		for range pick(4) {
			w.Calls = append(w.Calls, callWire{Name: strs[pick(len(strs))], Until: moment()})
		}
		s := w.shared()
		want, err := json.Marshal(s.wire())
		require.NoError(t, err)
		require.Equal(t, string(want), string(s.encode()))
	}
}

// TestEncodeWritesEveryField: each field of the record's format, set,
// is written as json.Marshal writes it (a field added to sharedWire and
// not to encode fails here).
func TestEncodeWritesEveryField(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	eachFieldSet(t, at, func(field string, w sharedWire) {
		want, err := json.Marshal(w)
		require.NoError(t, err)
		require.Equal(t, string(want), string(w.shared().encode()), "sharedWire.%s", field)
	})
}
