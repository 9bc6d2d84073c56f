package storm

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bench's processes read the caller's settings, and the bench reads the
// pool bound through app.Config by its variable's name.
func TestSettingsAreReadThroughAppConfig(t *testing.T) {
	c, err := environment{"ONCE_DISPATCH_MAX_ATTEMPTS": "7"}.config()
	require.NoError(t, err)
	v, ok := setting(c, "ONCE_DISPATCH_MAX_ATTEMPTS")
	assert.True(t, ok)
	assert.Equal(t, "7", v)
	v, ok = setting(c, "ONCE_DISPATCH_LEASE")
	assert.True(t, ok, "an unset setting reads as its default")
	assert.Equal(t, "30s", v)
	assert.Equal(t, 7, poolLimit(c, "ONCE_DISPATCH_MAX_ATTEMPTS"))
	assert.Equal(t, 0, poolLimit(c, "ONCE_NO_SUCH_SETTING"), "no setting: unbounded")
	assert.Contains(t, describePool(c, "ONCE_NO_SUCH_SETTING"), "unbounded")
}

// A pool setting grouped in a nested struct under an envPrefix is found too.
func TestNestedSettingsAreFound(t *testing.T) {
	type pool struct {
		MaxConns int `env:"MAX_CONNS" envDefault:"10"`
	}
	type config struct {
		Name string `env:"ONCE_NAME"`
		DB   pool   `envPrefix:"ONCE_DB_"`
	}
	v, ok := settingIn(reflect.ValueOf(config{DB: pool{MaxConns: 12}}), "", "ONCE_DB_MAX_CONNS")
	assert.True(t, ok)
	assert.Equal(t, "12", v)
}

func TestEnvironmentOverridesCopy(t *testing.T) {
	base := environment{"A": "1", "B": "2"}
	over := base.with("B", "3", "C", "4")
	assert.Equal(t, environment{"A": "1", "B": "2"}, base)
	assert.Equal(t, []string{"A=1", "B=3", "C=4"}, over.list())
}
