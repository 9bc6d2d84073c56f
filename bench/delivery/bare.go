package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
)

// drainBareAMQP publishes n persistent messages of the drain's size to a
// durable queue of the run, the way the AMQP publisher does (a durable
// fanout exchange and queue named after the topic, confirm-mode channels,
// a batch sent then its confirms awaited) but on amqp091 alone: no
// database, no once code. conc channels of one connection publish batches
// of batch at once, as one Dispatcher with that concurrency would. It is
// the broker's own limit for this work on this machine, measured in the
// same run as the Dispatchers.
func drainBareAMQP(ctx context.Context, cfg DrainConfig, prefix string, n, conc int) (time.Duration, error) {
	conn, err := amqp091.DialConfig(cfg.AMQPURL, amqp091.Config{Dial: amqp091.DefaultDial(5 * time.Second)})
	if err != nil {
		return 0, fmt.Errorf("amqp: connect: %w", err)
	}
	defer conn.Close()
	topic := queue.Topic(prefix, EventType)
	if err := declareBareTopic(conn, topic); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	batches := make(chan int)
	go func() {
		defer close(batches)
		for sent := 0; sent < n; sent += cfg.Batch {
			select {
			case batches <- min(cfg.Batch, n-sent):
			case <-ctx.Done():
				return
			}
		}
	}()
	body := []byte(fmt.Sprintf(`{"n": 12345, "pad": "%s"}`, strings.Repeat("x", payloadPad)))
	var wg sync.WaitGroup
	errs := make([]error, conc)
	start := time.Now()
	for c := range conc {
		wg.Go(func() {
			if errs[c] = publishBareBatches(ctx, conn, topic, body, batches); errs[c] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	return took, errors.Join(errs...)
}

// declareBareTopic declares the exchange and queue of topic, bound as
// once's AMQP adapter binds them.
func declareBareTopic(conn *amqp091.Connection, topic string) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.ExchangeDeclare(topic, "fanout", true, false, false, false, nil); err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(topic, true, false, false, false, nil); err != nil {
		return err
	}
	return ch.QueueBind(topic, "", topic, false, nil)
}

// publishBareBatches publishes body on a channel of its own, one batch of
// the sizes it takes from batches at a time, and waits for the broker to
// confirm each batch before the next.
func publishBareBatches(ctx context.Context, conn *amqp091.Connection, topic string, body []byte, batches <-chan int) error {
	ch, err := conn.Channel()
	if err == nil {
		err = ch.Confirm(false)
	}
	if err != nil {
		return err
	}
	defer ch.Close()
	for size := range batches {
		confirms := make([]*amqp091.DeferredConfirmation, size)
		for i := range size {
			confirms[i], err = ch.PublishWithDeferredConfirmWithContext(ctx, topic, "", false, false, amqp091.Publishing{
				DeliveryMode: amqp091.Persistent, MessageId: uuid.NewString(),
				ContentType: "application/json", Body: body,
			})
			if err != nil {
				return err
			}
		}
		for _, dc := range confirms {
			acked, err := dc.WaitContext(ctx)
			if err == nil && !acked {
				err = errors.New("nack")
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
