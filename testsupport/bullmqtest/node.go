// Package bullmqtest runs a stock BullMQ Worker in Node.js (node/worker.mjs,
// with the bullmq version pinned in node/package.json) against what once
// publishes with ONCE_QUEUE=bullmq, and reports every job it processed. It
// installs the Node.js packages itself (nodetest) the first time a test
// needs them.
//
// Without node and npm the tests skip, unless CI is set: there they fail.
package bullmqtest

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/oncehq/once/testsupport/nodetest"
)

// NodeDir is the Node.js project of the test worker.
func NodeDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "node")
}

// Require makes sure node, npm and the pinned packages are there
// (nodetest.Require).
func Require(t testing.TB) {
	t.Helper()
	nodetest.Require(t, NodeDir(), "the BullMQ tests need a real BullMQ worker in Node.js")
}
