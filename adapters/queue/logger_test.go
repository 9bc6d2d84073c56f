package queue_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/queue"
	"github.com/oncehq/once/adapters/queue/memqueue"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/testkit"
)

// cannotRecord fails to record a job given up on (the database is away):
// a real failure, the message goes back to the broker.
type cannotRecord struct{}

func (cannotRecord) GiveUp(context.Context, ports.Message, error, int) error {
	return errors.New("cannot record the failed job")
}

// logLevels are the levels of the lines whose msg starts with prefix.
func logLevels(t *testing.T, logs string, prefix string) []string {
	t.Helper()
	var levels []string
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var line struct{ Level, Msg string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), "a JSON line: %s", sc.Text())
		if strings.HasPrefix(line.Msg, prefix) {
			levels = append(levels, line.Level)
		}
	}
	return levels
}

// A transient failure retried is expected: its retry is logged at WARN.
// A failure the worker cannot handle (it cannot record the job given up
// on) is still an ERROR.
func TestRetriesLogAtWarnAndUnhandledFailuresAtError(t *testing.T) {
	logs := &testkit.LogBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pub, sub := memqueue.New(memqueue.Config{})
	t.Cleanup(func() { _ = pub.Close() })
	failing := ports.MessageHandlerFunc(func(context.Context, ports.Message) error {
		return errors.New("platform unavailable") // no domain code: retryable
	})
	w, err := queue.NewWorker(sub, cannotRecord{}, republish{pub}, map[string]ports.MessageHandler{"a": failing},
		queue.WorkerConfig{MaxRetries: 2, InitialInterval: time.Millisecond, MaxInterval: time.Millisecond}, log)
	require.NoError(t, err)
	require.NoError(t, w.Run(context.Background()))
	m := ports.Message{ID: uuid.New(), Type: "a", WorkspaceID: uuid.New(), Payload: []byte(`{}`)}
	require.NoError(t, pub.Publish(queue.Topic("", "a"), queue.ToMessage(m)))

	require.Eventually(t, func() bool { return len(logLevels(t, logs.String(), "Handler returned error")) > 0 },
		5*time.Second, 10*time.Millisecond, "the unrecorded failure is logged:\n%s", logs)
	require.NoError(t, w.Close())

	retries := logLevels(t, logs.String(), "job parked until it may run again")
	require.NotEmpty(t, retries, "each retry is logged:\n%s", logs)
	for _, level := range retries {
		assert.Equal(t, "WARN", level, "a retry is expected, not an error")
	}
	for _, level := range logLevels(t, logs.String(), "Handler returned error") {
		assert.Equal(t, "ERROR", level, "a failure the worker cannot record stays an error")
	}
}
