package queue

import (
	"fmt"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// MisconfiguredError says that a broker answered but is not set up the way
// once was told, in one line an operator can act on: which broker, at
// which address, what is wrong and what to change. It never carries the
// URL (which may hold a password). It is ports.ErrBrokerMisconfigured
// (errors.Is), so a publish that fails with it spends no attempt.
type MisconfiguredError struct {
	Broker string // "redis", "amqp"
	Addr   string // host:port, or "" where it is not known
	// Reason says what is wrong and what to change.
	Reason string
	// Err is the broker's answer, if there was one.
	Err error
}

func (e *MisconfiguredError) Error() string {
	s := fmt.Sprintf("broker misconfigured (%s): %s", e.Broker, e.Reason)
	if e.Addr != "" {
		s = fmt.Sprintf("broker misconfigured at %s (%s): %s", e.Addr, e.Broker, e.Reason)
	}
	if e.Err != nil {
		s += ": " + domain.SanitizeError(e.Err)
	}
	return s
}

func (e *MisconfiguredError) Unwrap() error { return e.Err }

func (e *MisconfiguredError) Is(target error) bool { return target == ports.ErrBrokerMisconfigured }
