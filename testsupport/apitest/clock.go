package apitest

import (
	"go.uber.org/fx"

	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// ManualClock is testkit's, here beside WithClock, which makes it the
// service's.
type ManualClock = testkit.ManualClock

// NewManualClock returns a clock stopped at the wall clock's now.
func NewManualClock() *ManualClock { return testkit.NewManualClock() }

// WithClock makes clock the service's clock.
func WithClock(clock ports.Clock) fx.Option {
	return fx.Decorate(func(ports.Clock) ports.Clock { return clock })
}
