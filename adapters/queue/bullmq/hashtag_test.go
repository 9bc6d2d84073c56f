package bullmq

import "testing"

func TestHashTagged(t *testing.T) {
	for _, c := range []struct {
		prefix, queues string
		want           bool
	}{
		{"bull", "", false},
		{"{bull}", "", true},
		{"once:{bull}", "", true},
		{"{}bull", "", false}, // an empty tag: the whole key is hashed
		{"{bull", "", false},  // never closed within the prefix
		{"bull", "a={a},*={jobs}", true},
		{"bull", "a={a}", false}, // other event types go to queues named like them
		{"bull", "a=a,*={jobs}", false},
		{"b{ull", "*=x}", true}, // the tag spans the prefix and the name: still one per queue
	} {
		routes, err := ParseRoutes(c.queues, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := HashTagged(c.prefix, routes); got != c.want {
			t.Errorf("HashTagged(%q, %q) = %v, want %v", c.prefix, c.queues, got, c.want)
		}
	}
}
