package destinations

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSameSeesEveryField: a field of the record that same did not compare
// would make an outcome that changes only it write nothing.
func TestSameSeesEveryField(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	base := sharedWire{FilledAt: at}.shared()
	require.True(t, base.same(base.clone()), "a state differs from its copy")
	wt := reflect.TypeFor[sharedWire]()
	for i := range wt.NumField() {
		var changed sharedWire
		changed.FilledAt = at
		f := reflect.ValueOf(&changed).Elem().Field(i)
		switch v := f.Addr().Interface().(type) {
		case *bool:
			*v = true
		case *float64:
			*v = 1.5
		case *uint64:
			*v = 1
		case *int:
			*v = 1
		case *string:
			*v = "x"
		case *time.Duration:
			*v = time.Second
		case *time.Time:
			*v = at.Add(time.Second)
		case *[]string:
			*v = []string{"x"}
		case *[]callWire:
			*v = []callWire{{Name: "x", Until: at}}
		default:
			t.Fatalf("sharedWire.%s: a type this test does not know (%s)", wt.Field(i).Name, f.Type())
		}
		require.False(t, base.same(changed.shared()), "same does not compare sharedWire.%s", wt.Field(i).Name)
	}
}

// TestSameIsTheEncoding: states that encode alike are the same, even
// with the clock's monotonic reading or another zone, and a state cached
// as written is the same as the one decoded from its record.
func TestSameIsTheEncoding(t *testing.T) {
	now := time.Now() // with a monotonic reading
	s := sharedWire{FilledAt: now, OpenUntil: now.Add(time.Minute), Accounts: []string{"a"}, Calls: []callWire{{Name: "g:1", Until: now.Add(time.Hour)}}}.shared()
	decoded, ok := decode(s.encode())
	require.True(t, ok, "the encoding does not decode")
	require.True(t, s.same(decoded), "a state differs from its decoding")
	written := s.written()
	require.True(t, written.same(decoded), "a state cached as written is not what a reader decodes")
	require.False(t, strings.Contains(written.pace.filledAt.String(), "m="), "a state cached as written keeps the monotonic reading")
	require.False(t, strings.Contains(written.calls[0].until.String(), "m="), "a lease cached as written keeps the monotonic reading")
	inZone := s.clone()
	inZone.pace.filledAt = now.In(time.FixedZone("x", 3600))
	require.True(t, s.same(inZone), "a time in another zone differs")
}
