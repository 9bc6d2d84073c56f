package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResealCommand: on PostgreSQL, `once secrets reseal` reports its
// counts per kind; with nothing stored, none; and it refuses the
// embedded store, which no other process reaches. (What it re-seals is
// domain/secrets' tests.)
func TestResealCommand(t *testing.T) {
	useTestDatabase(t, "t2:cmVzZWFsLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=,t1:bWVtYmVyLXRlc3QtY3JlZGVudGlhbHMta2V5LTMyYnk=")

	_, err := runWorkspace(t, "create", "--name", "reseal", "--admin", "8b7f1c56-6f0e-4b8e-9d6c-3a1f2f7c9e01")
	require.NoError(t, err)
	out, err := runCommand(t, secretsCmd(), "reseal", "--batch", "10")
	require.NoError(t, err, out)
	assert.Equal(t, "store_credentials: resealed 0, already under t2 0\nwebhook_secrets: resealed 0, already under t2 0\n", out)

	t.Setenv("DATABASE_URL", "")
	_, err = runCommand(t, secretsCmd(), "reseal")
	require.ErrorContains(t, err, "set DATABASE_URL")
}
