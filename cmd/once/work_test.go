package main

import (
	"errors"
	"testing"

	"github.com/oncehq/once/app"
)

// `once work` has nothing to consume on BullMQ: it says so and fails
// (main exits non-zero with the message) instead of running idle.
func TestBullMQWorkRefusesToRun(t *testing.T) {
	t.Setenv("ONCE_QUEUE", app.QueueBullMQ)
	cmd := workCmd()
	err := cmd.RunE(cmd, nil)
	if !errors.Is(err, app.ErrNoWorkerOnBullMQ) {
		t.Fatalf("once work with ONCE_QUEUE=bullmq = %v, want %v", err, app.ErrNoWorkerOnBullMQ)
	}
}
