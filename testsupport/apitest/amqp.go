package apitest

import (
	"maps"
	"slices"
	"testing"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/amqp"
	"github.com/oncehq/once/app"
)

// amqpTopics are the topics the service declared under the test's own
// prefix: those of its workers, and those of the events it wrote (which
// its Dispatcher published).
func (s *Server) amqpTopics(t testing.TB, prefix string, handlers app.Handlers) []string {
	types := map[string]bool{}
	for eventType := range handlers {
		types[eventType] = true
	}
	for _, e := range s.Events(t) {
		types[e.Type] = true
	}
	topics := make([]string, 0, len(types))
	for _, eventType := range slices.Sorted(maps.Keys(types)) {
		topics = append(topics, queue.Topic(prefix, eventType))
	}
	return topics
}

// deleteAMQPTopics deletes the queues (each with its dead-letter queue)
// and exchanges of topics: RabbitMQ is shared, and quorum queues are not
// free to keep.
func deleteAMQPTopics(t testing.TB, amqpURL string, topics []string) {
	if len(topics) == 0 {
		return
	}
	conn, err := amqp091.DialConfig(amqpURL, amqp091.Config{Dial: amqp091.DefaultDial(5 * time.Second)})
	if err != nil {
		t.Logf("apitest: delete the test's queues: %v", err)
		return
	}
	defer conn.Close()
	for _, topic := range topics {
		if err := amqp.DeleteTopology(conn, topic); err != nil {
			t.Logf("apitest: %v", err)
		}
	}
}
