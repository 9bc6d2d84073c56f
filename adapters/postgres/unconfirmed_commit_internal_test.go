package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
)

// The warning is known whatever language the server speaks, by where it
// was raised; a warning raised elsewhere is not it.
func TestSyncRepWaitCancelledIsKnownByWhereItWasRaised(t *testing.T) {
	german := &pgconn.Notice{
		Severity: "WARNUNG", SeverityUnlocalized: "WARNING", Code: "01000",
		Message: "Warten auf synchrone Replikation wird storniert wegen Benutzeraufforderung",
		File:    "syncrep.c", Routine: "SyncRepWaitForLSN",
	}
	english := &pgconn.Notice{
		Severity: "WARNING", Code: "01000",
		Message: "canceling wait for synchronous replication due to user request",
		Detail:  "The transaction has already committed locally, but might not have been replicated to the standby.",
	}
	other := &pgconn.Notice{
		Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: "25P01",
		Message: "there is no transaction in progress", File: "xact.c", Routine: "UserAbortTransactionBlock",
	}
	raised := &pgconn.Notice{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Message: "synchronous replication committed locally", File: "pl_exec.c"}
	assert.True(t, syncRepWaitCancelled(german))
	assert.True(t, syncRepWaitCancelled(english), "without the source fields, by its text")
	assert.False(t, syncRepWaitCancelled(other))
	assert.False(t, syncRepWaitCancelled(raised))
}
