package amqp

import (
	"net"
	"strconv"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/domain"
)

// Ping checks that the broker at cfg.URL accepts a connection (TCP, TLS
// and the AMQP handshake with its credentials); the dial timeout bounds
// all of it. A broker that does not answer is a *queue.UnreachableError
// naming its address, one that refuses the credentials or the virtual host
// a *queue.MisconfiguredError.
func Ping(cfg Config) error {
	uri, err := amqp091.ParseURI(cfg.URL)
	if err != nil {
		// The URL may hold a password: never echo it.
		return domain.Errorf(domain.CodeValidation, "amqp: invalid AMQP URL")
	}
	addr := net.JoinHostPort(uri.Host, strconv.Itoa(uri.Port))
	conn, err := amqp091.DialConfig(cfg.URL, *cfg.watermillConfig().Connection.AmqpConfig)
	if err != nil && misconfigured(err) {
		return &queue.MisconfiguredError{Broker: "amqp", Addr: addr, Reason: "RabbitMQ refused the URL's credentials or virtual host", Err: err}
	}
	if err != nil {
		return &queue.UnreachableError{Broker: "amqp", Addr: addr, Err: err}
	}
	return conn.Close()
}
