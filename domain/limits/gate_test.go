package limits_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain/limits"
)

func TestTheGateCapsEachWorkspaceApart(t *testing.T) {
	g := limits.NewGate(2)
	a, b := uuid.New(), uuid.New()
	assert.True(t, g.TryEnter(a))
	assert.True(t, g.TryEnter(a))
	assert.False(t, g.TryEnter(a), "a third unit of a is over the cap")
	assert.True(t, g.TryEnter(b), "b has slots of its own")
	g.Leave(a)
	assert.Equal(t, 1, g.InFlight(a))
	assert.True(t, g.TryEnter(a), "a slot given back can be taken again")
	g.Leave(a)
	g.Leave(a)
	g.Leave(b)
	assert.Zero(t, g.InFlight(a))
	assert.Zero(t, g.InFlight(b))

	open := limits.NewGate(0)
	for range 100 {
		assert.True(t, open.TryEnter(a), "no cap")
	}
}
