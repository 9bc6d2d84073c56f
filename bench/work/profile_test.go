package work

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/testsupport/pgtest"
)

// The profile counts the rows each table wrote per job, and how many of
// its updates were written beside their row (HOT): whether a job's UPDATE
// adds index entries is read there, not guessed from its time.
func TestProfileCountsEachTablesWritesAndHOTUpdates(t *testing.T) {
	db := pgtest.New(t)
	ctx := context.Background()
	conn, err := db.Owner.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, stmt := range []string{
		`CREATE TABLE hot_probe (id int PRIMARY KEY, note text)`,
		`INSERT INTO hot_probe VALUES (1, 'a'), (2, 'b')`,
		`UPDATE hot_probe SET note = 'c' WHERE id = 1`,
		`UPDATE hot_probe SET id = 3 WHERE id = 2`,
		// Reported when the session next goes idle, after this statement.
		`SELECT pg_stat_force_next_flush()`,
		`SELECT 1`,
	} {
		_, err := conn.ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	var b strings.Builder
	require.NoError(t, writeTableWrites(ctx, db.Owner.DB, &b, 2))
	want := "| hot_probe | 1.00 | 1.00 | 0.50 | 0.00 |"
	require.Contains(t, b.String(), want)
}
