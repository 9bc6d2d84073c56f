package queue_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{domain.Errorf(domain.CodeUnavailable, "x"), true},
		{domain.Errorf(domain.CodeIdempotencyInProgress, "x"), true},
		{domain.Errorf(domain.CodeInternal, "x"), true},
		{errors.New("driver: bad connection"), true}, // no code: CodeInternal
		{domain.Errorf(domain.CodeValidation, "x"), false},
		{domain.Errorf(domain.CodeNotFound, "x"), false},
		{domain.Errorf(domain.CodeConflict, "x"), false},
		{domain.Errorf(domain.CodeUnsafePayload, "x"), false},
	} {
		if got := queue.Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestBrokerUnreachable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("cannot xadd message: %w", refused), true},
		{"reset by peer", fmt.Errorf("write: %w", syscall.ECONNRESET), true},
		{"broken pipe", syscall.EPIPE, true},
		{"EOF in a reply", fmt.Errorf("read: %w", io.EOF), true},
		{"closed connection", net.ErrClosed, true},
		{"i/o timeout", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, true},
		{"unknown host", &net.DNSError{Err: "no such host", Name: "redis", IsNotFound: true}, true},
		{"deadline", fmt.Errorf("waiting for the confirm: %w", context.DeadlineExceeded), true},
		{"said by the broker adapter", fmt.Errorf("OOM command not allowed: %w", ports.ErrBrokerUnreachable), true},
		{"canceled: the caller gave up", context.Canceled, false},
		{"nack", errors.New("amqp: the broker refused message 1 (nack)"), false},
		{"a command error", errors.New("ERR Invalid stream ID specified as stream command argument"), false},
		{"a bad message", domain.Errorf(domain.CodeValidation, "no id"), false},
		{"nil", nil, false},
	} {
		if got := queue.BrokerUnreachable(c.err); got != c.want {
			t.Errorf("%s: BrokerUnreachable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
