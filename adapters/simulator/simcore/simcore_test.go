package simcore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain"
)

func TestFaultsInjectWhatWasAsked(t *testing.T) {
	f := simcore.NewFaults("platform", "call")
	require.NoError(t, f.Before())
	require.NoError(t, f.After())

	f.FailNext(2, nil)
	for range 2 {
		err := f.Before()
		require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
		require.ErrorContains(t, err, "simulated platform outage")
	}
	require.NoError(t, f.Before())

	mine := errors.New("mine")
	f.FailNext(1, mine)
	require.ErrorIs(t, f.Before(), mine)

	f.FailAfter(1)
	err := f.After()
	require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	require.ErrorContains(t, err, "platform call timed out")
	require.NoError(t, f.After())
}

func TestFaultsWaitIsAbandonedWithItsContext(t *testing.T) {
	f := simcore.NewFaults("source", "fetch")
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	require.NoError(t, f.Wait(ended), "no latency, no wait")
	err := f.Abandoned(ended)
	require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	require.ErrorContains(t, err, "source fetch abandoned")
	require.NoError(t, f.Abandoned(t.Context()))

	f.SetLatency(time.Hour)
	err = f.Wait(ended)
	require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	require.ErrorIs(t, err, context.Canceled)
}

type journal struct {
	err      error
	recorded []string
}

func (j *journal) Record(e string) error {
	if j.err != nil {
		return j.err
	}
	j.recorded = append(j.recorded, e)
	return nil
}

func TestPerformRecordsFirstAndActsOnlyIfRecorded(t *testing.T) {
	var applied []string
	apply := func(e string) { applied = append(applied, e) }
	require.NoError(t, simcore.Perform[string](nil, "a", "provider", apply))
	j := &journal{}
	require.NoError(t, simcore.Perform[string](j, "b", "provider", apply))
	require.Equal(t, []string{"b"}, j.recorded)

	disk := errors.New("disk full")
	err := simcore.Perform[string](&journal{err: disk}, "c", "provider", apply)
	require.Equal(t, domain.CodeUnavailable, domain.ErrorCode(err))
	require.ErrorIs(t, err, disk)
	require.ErrorContains(t, err, "the provider could not complete the call")
	require.Equal(t, []string{"a", "b"}, applied)
}

func TestReplayAppliesInOrderAndNamesABadEntry(t *testing.T) {
	var applied []string
	apply := func(e string) { applied = append(applied, e) }
	check := func(e string) error {
		if e == "" {
			return errors.New("no token")
		}
		return nil
	}
	require.NoError(t, simcore.Replay([]string{"a", "b"}, "charge", check, apply))
	require.Equal(t, []string{"a", "b"}, applied)
	require.EqualError(t, simcore.Replay([]string{"c", ""}, "charge", check, apply), "charge 1: no token")
}

func TestTallyCountsPerKeyAndInAll(t *testing.T) {
	var tally simcore.Tally
	require.Zero(t, tally.Of("a"))
	tally.Add("a")
	tally.Add("a")
	tally.Add("b")
	require.Equal(t, 2, tally.Of("a"))
	require.Equal(t, 1, tally.Of("b"))
	require.Equal(t, 3, tally.Total())
}
