package memory_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/testsupport/contract"
)

func TestRateLimiterContract(t *testing.T) {
	contract.RateLimiter(t, memory.NewRateLimiter(system.NewClock()), func(uuid.UUID) {})
}
