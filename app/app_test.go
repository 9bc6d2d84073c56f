package app_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Every configuration combination must wire: ValidateApp checks the graph
// without running constructors, so no database is needed.
func TestValidateApp(t *testing.T) {
	redis := apitest.Config("postgres://once_service@127.0.0.1:5432/once?sslmode=disable")
	redis.Queue, redis.Dispatcher, redis.Worker = app.QueueRedis, true, true
	// The API alone with its relay: the relay brings the queue's publisher.
	relayOnly := apitest.Config("postgres://once_service@127.0.0.1:5432/once?sslmode=disable")
	relayOnly.Queue, relayOnly.Relay = app.QueueAMQP, app.RelayOn
	bullmq := apitest.Config("postgres://once_service@127.0.0.1:5432/once?sslmode=disable")
	bullmq.Queue, bullmq.Dispatcher = app.QueueBullMQ, true
	// serve with its in-process worker, and `once work`: once's own jobs.
	bullmqWorker := bullmq
	bullmqWorker.Worker = true
	bullmqWork := bullmqWorker
	bullmqWork.Dispatcher = false
	memoryRelay := apitest.Config("")
	s3 := apitest.Config("postgres://once_service@127.0.0.1:5432/once?sslmode=disable")
	s3.ObjectStore, s3.S3Endpoint, s3.S3Bucket = app.ObjectStoreS3, "https://s3.eu-central-1.amazonaws.com", "once-media"
	memoryRelay.Relay = app.RelayOn
	configs := map[string]app.Config{
		"postgres+amqp, relay only": relayOnly,
		"postgres+bullmq":           bullmq,
		"postgres+bullmq, worker":   bullmqWorker,
		"postgres+bullmq, work":     bullmqWork,
		"memory, relay on":          memoryRelay,
		"memory":                    apitest.Config(""),
		"postgres":                  apitest.Config("postgres://once_service@127.0.0.1:5432/once?sslmode=disable"),
		"postgres+redis":            redis,
		"postgres+s3":               s3,
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, fx.ValidateApp(app.Serve(cfg, quiet)))
			withOps := cfg.WithOpsAddr(app.OpsAddrServe)
			require.NoError(t, fx.ValidateApp(app.Serve(withOps, quiet)), "with the ops listener")
			require.NoError(t, fx.ValidateApp(app.Base(withOps, quiet), app.Ops(withOps.OpsConfig), app.Background(withOps)), "dispatch and work")
			require.NoError(t, fx.ValidateApp(app.Base(cfg, quiet)))
		})
	}
}

// The embedded default really starts and stops, demo seed and ops listener
// included.
func TestServeStartsOnMemory(t *testing.T) {
	cfg := apitest.Config("")
	cfg.Demo, cfg.OpsAddr = true, "127.0.0.1:0"
	fxtest.New(t, app.Serve(cfg, quiet)).RequireStart().RequireStop()
}
