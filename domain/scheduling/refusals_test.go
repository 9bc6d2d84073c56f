package scheduling

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Refusals end in the order of their ends, whatever order they came in;
// one forgotten ends no more, and one remembered again ends at its new
// end.
func TestRefusalsEndInTheirOrder(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	rs := NewRefusals()
	rs.Remember("c", Refusal{Until: now.Add(3 * time.Second)}, now)
	rs.Remember("a", Refusal{Until: now.Add(time.Second)}, now)
	rs.Remember("b", Refusal{Until: now.Add(2 * time.Second)}, now)
	rs.Forget("b")
	rs.Remember("b", Refusal{Until: now.Add(4 * time.Second)}, now)
	var ended []string
	end := func(d string) { ended = append(ended, d) }
	assert.Equal(t, now.Add(time.Second), rs.Expire(now, end))
	assert.Equal(t, now.Add(3*time.Second), rs.Expire(now.Add(2*time.Second), end))
	assert.Equal(t, []string{"a"}, ended, "b was forgotten, and remembered for later")
	assert.True(t, rs.Expire(now.Add(5*time.Second), end).IsZero())
	assert.Equal(t, []string{"a", "c", "b"}, ended)
	_, refused := rs.Of("b", now)
	assert.False(t, refused)
}
