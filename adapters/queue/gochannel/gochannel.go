// Package gochannel is the in-process queue: watermill's GoChannel, for the
// embedded default (one binary, no broker) and for unit tests.
//
// It is persistent in watermill's sense: every message published to a topic
// is kept in memory for the life of the process and replayed to each new
// subscription of that topic, so a message published before the worker
// subscribed is not lost. The price is that memory grows with every message
// and a process restart loses them all: the embedded mode trades durability
// for having no broker; the outbox still holds the events.
package gochannel

import (
	"log/slog"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/oncehq/once/adapters/queue"
)

// DefaultBuffer is the output channel buffer of each subscription.
const DefaultBuffer = 256

// Config tunes the in-process queue.
type Config struct {
	// Buffer is each subscription's output channel buffer (default
	// DefaultBuffer).
	Buffer int64
}

// New returns the publisher and subscriber of one shared GoChannel: they
// are the same object, so closing either closes both.
func New(cfg Config, logger *slog.Logger) (message.Publisher, message.Subscriber) {
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	ch := gochannel.NewGoChannel(gochannel.Config{
		OutputChannelBuffer: cfg.Buffer,
		Persistent:          true,
	}, queue.NewLogger(logger))
	return ch, ch
}
