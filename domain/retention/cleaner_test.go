package retention_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain/retention"
)

func TestPolicyRefusesWhatWouldRemoveSomethingStillUseful(t *testing.T) {
	day := 24 * time.Hour
	ok := retention.Policy{Operations: 30 * day, Tasks: 30 * day, DeadLetters: 14 * day}
	assert.NoError(t, ok.Validate(2*day))
	for name, p := range map[string]retention.Policy{
		"operations below a day":           {Operations: time.Hour, Tasks: 30 * day, DeadLetters: time.Hour},
		"tasks below the idempotency keys": {Operations: 30 * day, Tasks: day, DeadLetters: day},
		"dead letters below a day":         {Operations: 30 * day, Tasks: 30 * day, DeadLetters: time.Hour},
		"dead letters outlive operations":  {Operations: 3 * day, Tasks: 30 * day, DeadLetters: 4 * day},
		"negative, as from a typo'd sign":  {Operations: -30 * day, Tasks: 30 * day, DeadLetters: day},
	} {
		assert.Error(t, p.Validate(2*day), name)
	}
}
