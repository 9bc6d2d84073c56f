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
