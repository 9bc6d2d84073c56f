package queue

import (
	"errors"
	"fmt"
	"os"

	"github.com/oncehq/once/domain"
)

// UnreachableError says that a broker did not answer when a process started,
// in one line an operator can act on: which broker, at which address, and
// why. It never carries the URL (which may hold a password).
type UnreachableError struct {
	Broker string // "redis", "amqp"
	Addr   string // host:port
	Err    error
}

func (e *UnreachableError) Error() string {
	cause := e.Err
	var sysErr *os.SyscallError // "connect: connection refused" -> "connection refused"
	if errors.As(cause, &sysErr) {
		cause = sysErr.Err
	}
	return fmt.Sprintf("broker unreachable at %s (%s): %s", e.Addr, e.Broker, domain.SanitizeError(cause))
}

func (e *UnreachableError) Unwrap() error { return e.Err }
