//go:build oncetest

package app

import (
	"os"
	"syscall"

	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/model"
)

// relayHooks, in a build for the crash tests only, kill the process (kill
// -9: nothing after it runs) at the point ONCE_TEST_RELAY_KILL names:
// after-commit (the business transaction committed, nothing published) or
// after-publish (the broker accepted the events, nothing marked).
func relayHooks() dispatch.RelayHooks {
	die := func([]model.OutboxEvent) { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	switch os.Getenv("ONCE_TEST_RELAY_KILL") {
	case "after-commit":
		return dispatch.RelayHooks{Committed: die}
	case "after-publish":
		return dispatch.RelayHooks{Published: die}
	}
	return dispatch.RelayHooks{}
}
