//go:build !oncetest

package app

import "github.com/oncehq/once/domain/dispatch"

// relayHooks are none in a release build; the crash tests build with the
// oncetest tag (relay_hooks_oncetest.go).
func relayHooks() dispatch.RelayHooks { return dispatch.RelayHooks{} }
