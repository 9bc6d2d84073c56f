package jobs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Two payloads are the same JSON value whatever their bytes (jsonb
// reorders keys and spaces them); the same bytes are the same value only
// if they are JSON at all.
func TestSameJSONComparesValuesNotBytes(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"a": 1, "b": "x"}`, `{"a": 1, "b": "x"}`, true},
		{`{"b":"x","a":1}`, `{"a": 1, "b": "x"}`, true},
		{`{"a": 1}`, `{"a": 2}`, false},
		{`{"a": 1`, `{"a": 1`, false},
		{``, ``, false},
	} {
		require.Equal(t, c.same, sameJSON([]byte(c.a), []byte(c.b)), "%q %q", c.a, c.b)
	}
}
