package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/ports"
)

// With tracing off nothing is wrapped or installed: the publisher and the
// handlers are the ones given, the database and broker clients get no
// provider, so they install no hook and make no span.
func TestTracingOffInstallsNothing(t *testing.T) {
	var off Tracing
	cfg := DefaultConfig()
	pub := &nopPublisher{}
	assert.Same(t, pub, off.publisher(pub, messaging(cfg.QueueConfig, cfg.BullMQConfig)))
	h := ports.MessageHandlerFunc(func(context.Context, ports.Message) error { return nil })
	traced := off.handlers(Handlers{"x": h}, messaging(cfg.QueueConfig, cfg.BullMQConfig))
	assert.IsType(t, h, traced["x"], "not wrapped")
	assert.Nil(t, off.clients())
	assert.Empty(t, off.postgres())
}

// The messaging spans name the broker and the destination a message
// really goes to.
func TestMessagingNamesTheBrokerAndItsDestination(t *testing.T) {
	cfg := DefaultConfig()
	cfg.QueuePrefix = "once."
	for queue, system := range map[string]string{QueueRedis: "redis", QueueAMQP: "rabbitmq", QueueMemory: "gochannel"} {
		cfg.Queue = queue
		m := messaging(cfg.QueueConfig, cfg.BullMQConfig)
		assert.Equal(t, system, m.System, queue)
		assert.Equal(t, "once.media.process", m.Destination("media.process"), queue)
	}
	cfg.Queue, cfg.BullMQQueues = QueueBullMQ, "media.process=media,*=jobs"
	m := messaging(cfg.QueueConfig, cfg.BullMQConfig)
	assert.Equal(t, "bullmq", m.System)
	assert.Equal(t, "media", m.Destination("media.process"))
	assert.Equal(t, "jobs", m.Destination("ai.task"))
	own := redisMessaging(cfg.QueueConfig) // once's own jobs with bullmq
	assert.Equal(t, "redis", own.System)
	assert.Equal(t, "once.webhook.deliver", own.Destination("webhook.deliver"))
}

type nopPublisher struct{}

func (*nopPublisher) Publish(context.Context, ...ports.Message) error { return nil }
