package app

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/testkit"
)

// The start-up check warns unless commits wait for a synchronous standby.
func TestReplicationCheckWarnsWithoutASynchronousStandby(t *testing.T) {
	for name, c := range map[string]struct {
		r     postgres.Replication
		err   error
		level string
		says  string
	}{
		"synchronous": {r: postgres.Replication{SynchronousStandbyNames: "*", SynchronousCommit: "on", Standbys: 1},
			level: "INFO", says: "commits wait for a synchronous standby"},
		"remote_apply": {r: postgres.Replication{SynchronousStandbyNames: "FIRST 1 (s1, s2)", SynchronousCommit: "remote_apply", Standbys: 2},
			level: "INFO", says: "commits wait for a synchronous standby"},
		"asynchronous standby": {r: postgres.Replication{SynchronousCommit: "on", Standbys: 1},
			level: "WARN", says: "the primary has no synchronous standby"},
		"commits that do not wait": {r: postgres.Replication{SynchronousStandbyNames: "*", SynchronousCommit: "local", Standbys: 1},
			level: "WARN", says: "the primary has no synchronous standby"},
		"single server": {r: postgres.Replication{SynchronousCommit: "on"},
			level: "WARN", says: "no standby to fail over to may ignore this"},
		"a standby": {r: postgres.Replication{InRecovery: true},
			level: "WARN", says: "target_session_attrs=read-write"},
		"unreadable": {err: errors.New("permission denied"), level: "WARN", says: "could not check"},
	} {
		t.Run(name, func(t *testing.T) {
			var buf testkit.LogBuffer
			logReplication(slog.New(slog.NewTextHandler(&buf, nil)), c.r, c.err)
			line := buf.String()
			assert.Equal(t, 1, strings.Count(line, "\n"), line)
			assert.Contains(t, line, "level="+c.level)
			assert.Contains(t, line, c.says)
		})
	}
}
