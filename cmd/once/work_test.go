package main

import (
	"strings"
	"testing"

	"github.com/oncehq/once/app"
)

// `once work` runs on BullMQ as on any broker (it consumes once's own
// jobs, the webhook deliveries): it goes on to the checks of every worker
// process, here the missing database, instead of refusing the queue.
func TestBullMQWorkRunsLikeAnyWorker(t *testing.T) {
	t.Setenv("ONCE_QUEUE", app.QueueBullMQ)
	t.Setenv("DATABASE_URL", "")
	cmd := workCmd()
	err := cmd.RunE(cmd, nil)
	if err == nil || !strings.Contains(err.Error(), "once work needs DATABASE_URL") {
		t.Fatalf("once work with ONCE_QUEUE=bullmq and no database = %v, want the standalone check's error", err)
	}
}
