package limits_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/domain/model"
)

func TestParseRateReadsRequestsUnitAndBurst(t *testing.T) {
	for in, want := range map[string]model.Rate{
		"100/s":      {Requests: 100, Per: time.Second, Burst: 100},
		"100/s:200":  {Requests: 100, Per: time.Second, Burst: 200},
		" 6000/m:1 ": {Requests: 6000, Per: time.Minute, Burst: 1},
		"5/h":        {Requests: 5, Per: time.Hour, Burst: 5},
		"off":        {},
		"OFF":        {},
	} {
		got, err := limits.ParseRate(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "100", "100/d", "0/s", "-1/s", "x/s", "10/s:0", "10/s:x", "10/500ms"} {
		_, err := limits.ParseRate(in)
		assert.Error(t, err, "%q", in)
	}
	assert.Equal(t, "100/s:200", model.Rate{Requests: 100, Per: time.Second, Burst: 200}.String())
	assert.Equal(t, "off", model.Rate{}.String())
}

func TestAPolicyGivesAWorkspaceItsOwnRateOrTheDefault(t *testing.T) {
	big, quiet, other := uuid.New(), uuid.New(), uuid.New()
	p, err := limits.ParsePolicy("10/s", big.String()+"=500/s:1000, "+quiet.String()+"=off")
	require.NoError(t, err)
	assert.Equal(t, model.Rate{Requests: 500, Per: time.Second, Burst: 1000}, p.For(big))
	assert.True(t, p.For(quiet).Unlimited())
	assert.Equal(t, model.Rate{Requests: 10, Per: time.Second, Burst: 10}, p.For(other))

	for _, overrides := range []string{"nope", "not-a-uuid=1/s", uuid.Nil.String() + "=1/s", big.String() + "=1/x",
		big.String() + "=1/s," + big.String() + "=2/s"} {
		_, err := limits.ParsePolicy("10/s", overrides)
		assert.Error(t, err, overrides)
	}
}
