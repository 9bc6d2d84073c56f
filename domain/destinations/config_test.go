package destinations_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain/destinations"
	"github.com/oncehq/once/domain/model"
)

// Every platform a store may be on has a pace of its own: a platform
// added to model.Platforms without one would run at the fallback's, with
// no rate at all.
func TestTheDefaultConfigPacesEveryPlatform(t *testing.T) {
	cfg := destinations.DefaultConfig()
	for _, platform := range model.Platforms {
		quota, ok := cfg.Systems[platform]
		if assert.True(t, ok, platform) {
			assert.Positive(t, quota.Rate, platform)
			assert.Positive(t, quota.Concurrency, platform)
		}
	}
	assert.Positive(t, cfg.Fallback.Concurrency)
}

// A worker of few slots caps every destination at half of them, so one
// that hangs leaves the others the rest; a cap already below stays.
func TestQuotasWithinAWorkersSlots(t *testing.T) {
	cfg := destinations.DefaultConfig()
	cfg.Systems["open"] = destinations.Quota{Rate: 3} // no cap: half the slots
	cfg.Systems["narrow"] = destinations.Quota{Concurrency: 1}
	small := cfg.WithinSlots(4)
	assert.Equal(t, 1, small.Systems["narrow"].Concurrency, "a cap below stays")
	delete(small.Systems, "narrow")
	for system, q := range small.Systems {
		assert.Equal(t, 2, q.Concurrency, system)
		assert.Equal(t, cfg.Systems[system].Rate, q.Rate, system)
	}
	assert.Equal(t, 2, small.Fallback.Concurrency)
	assert.Equal(t, 1, cfg.WithinSlots(1).Systems["webhook"].Concurrency, "one slot: one call")
	assert.Equal(t, cfg.Systems["webhook"], cfg.WithinSlots(256).Systems["webhook"], "the default slots change nothing")
	assert.Equal(t, 0, cfg.Systems["open"].Concurrency, "cfg itself unchanged")
}
