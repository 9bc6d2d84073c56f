package aisim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/aisim"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

type journal struct {
	charges []aisim.Charge
	err     error
}

func (j *journal) Record(c aisim.Charge) error {
	if j.err != nil {
		return j.err
	}
	j.charges = append(j.charges, c)
	return nil
}

func TestSimJournalAndRestore(t *testing.T) {
	j := &journal{}
	first := aisim.New(aisim.WithJournal(j))
	r, err := first.Generate(context.Background(), req("tok", model.AIImage))
	require.NoError(t, err)
	_, err = first.Generate(context.Background(), req("tok", model.AIImage))
	require.NoError(t, err)
	require.Len(t, j.charges, 1, "a replay journals nothing")

	restored := aisim.New()
	require.NoError(t, restored.Restore(j.charges))
	again, err := restored.Generate(context.Background(), req("tok", model.AIImage))
	require.NoError(t, err)
	assert.Equal(t, r, again)
	assert.Equal(t, 1, restored.ChargesFor("tok"))
	_, err = restored.Generate(context.Background(), req("tok", model.AIText))
	assert.True(t, domain.IsCode(err, domain.CodeConflict), "%v", err)
	assert.Error(t, aisim.New().Restore([]aisim.Charge{{Token: "t", Kind: "video"}}))
}

func TestSimJournalFailureIsTransientAndChargesNot(t *testing.T) {
	j := &journal{err: errors.New("disk full")}
	s := aisim.New(aisim.WithJournal(j))
	_, err := s.Generate(context.Background(), req("tok", model.AIText))
	assert.True(t, domain.IsCode(err, domain.CodeUnavailable), "%v", err)
	assert.Zero(t, s.Charges())
}
