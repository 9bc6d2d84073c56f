package simhttp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
)

// A crash in the middle of an append leaves a torn last line: it is
// dropped (its effect never happened) and appends go on after the last
// whole entry.
func TestSimLedgerDropsATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	l, err := simhttp.OpenLedger(path)
	require.NoError(t, err)
	for _, token := range []string{"a", "b"} {
		_, err := l.Append(simhttp.Entry{Kind: simhttp.KindListing, Token: token, Effect: true})
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":3,"kind":"platform.listing","tok`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	read, err := simhttp.ReadLedger(path)
	require.NoError(t, err)
	assert.Len(t, read, 2, "a reader skips the torn line")

	l, err = simhttp.OpenLedger(path)
	require.NoError(t, err)
	assert.Len(t, l.Entries(simhttp.Filter{}), 2)
	e, err := l.Append(simhttp.Entry{Kind: simhttp.KindListing, Token: "c", Effect: true})
	require.NoError(t, err)
	assert.Equal(t, int64(3), e.Seq)
	require.NoError(t, l.Close())

	read, err = simhttp.ReadLedger(path)
	require.NoError(t, err)
	require.Len(t, read, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{read[0].Token, read[1].Token, read[2].Token})
	assert.Len(t, simhttp.Select(read, simhttp.Filter{Token: "b"}), 1)
}

// A damaged line before the end is not a torn write: the ledger refuses
// to open rather than forget effects.
func TestSimLedgerRefusesADamagedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"seq\":1}\nnot json\n{\"seq\":3}\n"), 0o644))
	_, err := simhttp.OpenLedger(path)
	assert.ErrorContains(t, err, "line 2")
	_, err = simhttp.ReadLedger(path)
	assert.Error(t, err)
}
