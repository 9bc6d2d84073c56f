package keyring

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	keys, err := Parse(" k2:AAEC , k1:AwQF ", "test key")
	if err != nil || len(keys) != 2 || keys[0].ID != "k2" || string(keys[1].Bytes) != "\x03\x04\x05" {
		t.Fatalf("got %v %v", keys, err)
	}
	if keys, err := Parse("k:-_8", "test key"); err != nil || string(keys[0].Bytes) != "\xfb\xff" {
		t.Fatalf("URL-safe unpadded base64: %v %v", keys, err)
	}
	for _, bad := range []string{"", "nocolon", ":AAEC", "k k:AAEC", "k:!!!", "k:AAEC,k:AAEC", strings.Repeat("x", 65) + ":AAEC"} {
		if _, err := Parse(bad, "test key"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := Parse("k:c2VjcmV0LXZhbHVl!", "test key"); err == nil || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("error leaks key material or is missing: %v", err)
	}
}
