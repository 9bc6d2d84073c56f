package stats_test

import (
	"strconv"
	"testing"

	"github.com/oncehq/once/bench/stats"
	"github.com/stretchr/testify/assert"
)

func TestSpreadIsTheMedianWithItsRange(t *testing.T) {
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	assert.Equal(t, "409", stats.Of([]float64{409}).Format(count))
	assert.Equal(t, "409", stats.Of([]float64{409, 409, 409}).Format(count))
	assert.Equal(t, "412 (155–900)", stats.Of([]float64{900, 155, 412}).Format(count))
	assert.Equal(t, "283.5 (155–412)", stats.Of([]float64{412, 155}).Format(count))
	assert.Equal(t, "–", stats.Of(nil).Format(count))
}
