package work

import (
	"slices"
	"testing"
)

func TestParseWorkers(t *testing.T) {
	got, err := ParseWorkers("1, 3")
	if err != nil || !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("ParseWorkers(1, 3) = %v, %v; want [1 3]", got, err)
	}
	for _, bad := range []string{"", "0", "1,1", "1,x", "-2"} {
		if got, err := ParseWorkers(bad); err == nil {
			t.Errorf("ParseWorkers(%q) = %v, want an error", bad, got)
		}
	}
}

func TestParseBucketNamesItsFlag(t *testing.T) {
	if b, err := parseBucket("--platform-bucket", "10:5"); err != nil || b != (bucket{10, 5}) {
		t.Fatalf("parseBucket(10:5) = %v, %v", b, err)
	}
	_, err := parseBucket("--platform-bucket", "10")
	if err == nil || err.Error() != `--platform-bucket "10": want capacity:leak_per_second, e.g. 40:2` {
		t.Fatalf("parseBucket(10): %v", err)
	}
}
