package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/testsupport/pgtest"
)

// A uuid.UUID parameter (a workspace's id, an operation's: several per
// statement of a job) is encoded as the 16 bytes it is. pgx sees a
// driver.Valuer, tries the binary format with its text, fails, plans that
// failure again at every parameter (a failed plan is not kept) and scans
// the text back: 20 allocations and a few microseconds a parameter, and
// the planning's deep stack grew the goroutines' stacks, a tenth of a
// worker's CPU per job between them.
func TestAUUIDParameterIsEncodedWithoutItsText(t *testing.T) {
	db := pgtest.New(t)
	m, err := postgres.TypeMapOf(context.Background(), openPool(t, db.AppDSN, 1))
	require.NoError(t, err)
	id := uuid.New()
	var param any = id // as a statement's arguments hold it
	var encoded []byte
	buf := make([]byte, 0, 16)
	allocs := testing.AllocsPerRun(10, func() {
		encoded, err = m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, param, buf[:0])
	})
	require.NoError(t, err)
	assert.Equal(t, id[:], encoded)
	assert.Zero(t, allocs)
}
