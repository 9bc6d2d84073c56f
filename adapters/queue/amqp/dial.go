package amqp

import (
	"context"
	"fmt"
	"net"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/ports"
)

// dial connects to cfg.URL within cfg.DialTimeout and ctx: TCP, TLS and the
// AMQP handshake all end by the earlier deadline.
func dial(ctx context.Context, cfg Config) (*amqp091.Connection, error) {
	deadline := time.Now().Add(cfg.DialTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	amqpCfg := cfg.amqpConfig()
	amqpCfg.Dial = func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Deadline: deadline}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// amqp091 clears it once the handshake is done.
		if err := conn.SetDeadline(deadline); err != nil {
			_ = conn.Close()
			return nil, err
		}
		return conn, nil
	}
	return amqp091.DialConfig(cfg.URL, amqpCfg)
}

// dialFailure classifies a failed dial: refused credentials or virtual
// host are the broker's misconfiguration, anything else an unreachable
// broker.
func dialFailure(err error) error {
	cause := ports.ErrBrokerUnreachable
	if misconfigured(err) {
		cause = ports.ErrBrokerMisconfigured
	}
	return fmt.Errorf("amqp: connect: %w: %w", cause, err)
}

// brokerFailure marks err, from a call on conn, as the broker's when the
// broker refused once's setup, or when the connection is gone.
func brokerFailure(conn *amqp091.Connection, err error) error {
	if ports.BrokersFault(err) {
		return err // a declaration refused (topology.refused)
	}
	if misconfigured(err) {
		return fmt.Errorf("%w: %w", ports.ErrBrokerMisconfigured, err)
	}
	if conn.IsClosed() {
		return fmt.Errorf("%w: connection lost: %w", ports.ErrBrokerUnreachable, err)
	}
	return err
}
