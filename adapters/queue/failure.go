package queue

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// BrokerUnreachable reports whether a publish failed because of the
// broker rather than the messages: the broker sub-packages said so
// (ports.ErrBrokerUnreachable: their own broker-wide errors, such as Redis
// OOM or LOADING, or an AMQP connection that died), or the network did: a
// refused, reset, aborted or closed connection, an unreachable host, a
// name that does not resolve, an I/O timeout, an EOF in the middle of a
// reply, or a context deadline (the broker did not answer in time). Any
// other error (a nack, a rejected command, a closed channel, a bad message)
// may be about the messages. A canceled context is neither: the caller
// gave up.
func BrokerUnreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ports.ErrBrokerUnreachable) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error // *net.OpError (dial, read, write), *net.DNSError, timeouts
	if errors.As(err, &netErr) {
		return true
	}
	for _, target := range []error{
		io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ETIMEDOUT,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// Retryable says whether a handler error is worth another attempt. It
// follows domain.Code.RetrySameKey: CodeUnavailable and
// CodeIdempotencyInProgress are transient, and so is CodeInternal, which is
// also what errors without a domain code (driver errors, recovered panics)
// map to: an unclassified failure gets the bounded retries, and one that is
// deterministic is still given up on after them. Every other code
// (validation, not found, conflict, forbidden, unsafe payload, …) means the
// message itself is wrong: retrying cannot help, so it is given up on at
// once.
func Retryable(err error) bool {
	return domain.ErrorCode(err).RetrySameKey()
}

// sanitizedError is an error on its way to logs, to operators or to
// last_error: its text is sanitized once (domain.SanitizeError), and its
// cause is still there for errors.Is and errors.As. A handler error leaving
// the worker is one (it reaches, through JobFailures, the dead letter
// operators read), and so is the cause of a publish failure.
type sanitizedError struct {
	text  string
	cause error
}

func (f *sanitizedError) Error() string { return f.text }
func (f *sanitizedError) Unwrap() error { return f.cause }

// Sanitized wraps err so that its text is sanitized (see sanitizedError).
func Sanitized(err error) error {
	var f *sanitizedError
	if err == nil || errors.As(err, &f) {
		return err
	}
	return &sanitizedError{text: domain.SanitizeError(err), cause: err}
}

// interrupted marks a failure that happened because the worker is shutting
// down (the message's context ended). Such a message is not given up on: it
// is left unacknowledged so the broker delivers it again.
type interrupted struct{ sanitizedError }

// sanitizeFailures wraps the handler, inside the retries, so that neither
// the retry log nor the dead letter ever carries the raw error text.
func sanitizeFailures(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		if err == nil {
			return out, nil
		}
		return out, Sanitized(err)
	}
}

// markInterrupted sits between giving up and the retries and tells a
// shutdown apart from a failure.
func markInterrupted(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		if err != nil && msg.Context().Err() != nil {
			ierr := &interrupted{sanitizedError{text: domain.SanitizeError(err), cause: err}}
			run := runOf(msg)
			run.outcome.kind, run.outcome.err = kindInterrupted, ierr
			return out, ierr
		}
		return out, err
	}
}

// giveUp is the outermost middleware: a failure that got through the
// retries, other than a shutdown, ends the job through failures, then the
// message is acknowledged. A message that is not an outbox event (its id
// is not a UUID) is handed over with what can be read of it, so it is
// logged and dropped rather than redelivered forever.
func giveUp(failures ports.JobFailures) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			out, err := h(msg)
			if err == nil || runOf(msg).outcome.handedBack() {
				return out, err
			}
			m, decodeErr := FromMessage(msg)
			if decodeErr != nil {
				m = ports.Message{Type: msg.Metadata.Get(MetadataEventType), Payload: msg.Payload}
			}
			// The job's end is recorded even when the handler's context
			// ended with its failure; the broker's ack follows.
			if err := failures.GiveUp(context.WithoutCancel(msg.Context()), m, err, m.Attempts+runOf(msg).attempts); err != nil {
				return nil, err
			}
			return nil, nil
		}
	}
}
