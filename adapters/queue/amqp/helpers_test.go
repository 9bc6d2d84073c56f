package amqp

import (
	"testing"

	wmamqp "github.com/ThreeDotsLabs/watermill-amqp/v3/pkg/amqp"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/testsupport/queuetest"
)

func wmNewPublisher(cfg wmamqp.Config, t *testing.T) (message.Publisher, error) {
	pub, err := wmamqp.NewPublisher(cfg, queue.NewLogger(queuetest.Logger(t)))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = pub.Close() })
	return pub, nil
}
