// Package queue is the watermill glue shared by the queue adapters: it maps
// ports.Message to watermill messages, publishes outbox events
// (ports.Publisher) and runs the worker that hands delivered messages to
// ports.MessageHandler implementations.
//
// The brokers live in sub-packages named after the technology: memqueue
// (in process), redisstream and amqp. Each one only builds watermill
// publishers and subscribers; everything that must behave the same on every
// broker (ids, metadata, retries, giving up on a job) is here, and
// queuetest checks it against each of them.
//
// bullmq is the exception: it writes BullMQ jobs for Node.js workers, is a
// ports.Publisher of its own with no watermill and no worker side, and
// passes queuetest's publisher contract judged by a real BullMQ worker.
package queue
