package simcore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simcore"
)

func TestConcurrencyKeepsTheMostInFlightAndTheSpansInArrivalOrder(t *testing.T) {
	var c simcore.Concurrency
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	endA := c.Start([]string{"shop", "order"}, "a", t0)
	endB := c.Start([]string{"shop"}, "b", t0.Add(time.Second))
	endB(t0.Add(2*time.Second), 429)
	endA(t0.Add(3*time.Second), 200)
	endC := c.Start([]string{"order"}, "c", t0.Add(4*time.Second))

	assert.Equal(t, map[string]int{"shop": 2, "order": 1}, c.MaxInFlight())
	spans := c.Spans("shop", "order", "none")
	assert.Len(t, spans, 2, "only keys with calls")
	require.Len(t, spans["shop"], 2)
	assert.Equal(t, simcore.Span{Seq: 1, Token: "a", Start: t0, End: t0.Add(3 * time.Second), Status: 200}, spans["shop"][0])
	assert.Equal(t, "b", spans["shop"][1].Token)
	assert.Equal(t, 429, spans["shop"][1].Status)
	require.Len(t, spans["order"], 2)
	assert.True(t, spans["order"][1].End.IsZero(), "c is in flight")

	c.Reset()
	endC(t0.Add(5*time.Second), 200) // started before the reset: recorded nowhere
	assert.Empty(t, c.MaxInFlight())
	assert.Empty(t, c.Spans("shop", "order"))
	c.Start([]string{"order"}, "d", t0)
	assert.Equal(t, map[string]int{"order": 1}, c.MaxInFlight(), "c's end did not count against d")
}
