package amqp

import (
	"errors"

	amqp091 "github.com/rabbitmq/amqp091-go"
)

// misconfigured tells the broker's answers that say it is not set up the
// way once was told, whatever is published: a declaration with other
// arguments than the existing queue's (PRECONDITION_FAILED), refused
// credentials, a virtual host or a resource the user may not use, a
// feature the broker does not have. Every publish would fail the same way
// until an operator changes once's settings or the broker.
func misconfigured(err error) bool {
	if errors.Is(err, amqp091.ErrCredentials) || errors.Is(err, amqp091.ErrVhost) || errors.Is(err, amqp091.ErrSASL) {
		return true
	}
	switch amqpCode(err) {
	case amqp091.PreconditionFailed, amqp091.AccessRefused, amqp091.NotFound, amqp091.NotAllowed, amqp091.NotImplemented:
		return true
	}
	return false
}

// amqpCode is the reply code of an AMQP exception in err's chain, 0 if
// there is none.
func amqpCode(err error) int {
	var e *amqp091.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
