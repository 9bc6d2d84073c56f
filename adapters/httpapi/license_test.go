package httpapi

import (
	"os"
	"strings"
	"testing"
)

// TestLicenseIsTheRepositorysLicense: the license the spec names is the
// one in the LICENSE file (the SDKs' tests check their packages name it
// too).
func TestLicenseIsTheRepositorysLicense(t *testing.T) {
	text, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Join(strings.Fields(string(text[:min(len(text), 200)])), " ")
	if License != "Apache-2.0" || !strings.HasPrefix(head, "Apache License Version 2.0, January 2004") {
		t.Fatalf("the spec names %s, LICENSE begins %q", License, head)
	}
}
