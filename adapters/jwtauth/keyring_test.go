package jwtauth

import (
	"testing"
	"time"
)

// Rotating the HS256 secret without logging anyone out: the steps of
// docs/operating.md, each a configuration that processes of the step before
// and after run beside, so every token any of them issues must pass every
// one of them, until the old secret is removed.
func TestKeyringRotation(t *testing.T) {
	oldKey := []byte("old-secret-0123456789abcdef0123456789")
	newKey := []byte("new-secret-0123456789abcdef0123456789")
	steps := []struct {
		name string
		ring *Keyring
	}{
		{"one secret (ONCE_JWT_SECRET)", ring(t, Secret{Key: oldKey})},
		{"the new one added second", ring(t, Secret{ID: "old", Key: oldKey}, Secret{ID: "new", Key: newKey})},
		{"the new one moved first", ring(t, Secret{ID: "new", Key: newKey}, Secret{ID: "old", Key: oldKey})},
		{"the old one removed", ring(t, Secret{ID: "new", Key: newKey})},
	}
	issued := make([]string, len(steps))
	verifiers := make([]*Verifier, len(steps))
	for i, s := range steps {
		iss, err := NewIssuer(s.ring, IssuerOptions{Issuer: issuer, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if issued[i], err = iss.Issue(workspace, user); err != nil {
			t.Fatal(err)
		}
		if verifiers[i], err = NewVerifier(VerifierOptions{Keyring: s.ring, Issuer: issuer}); err != nil {
			t.Fatal(err)
		}
	}
	// Steps 0 and 1 sign with the old secret, 2 and 3 with the new; 0 to 2
	// hold the old, 1 to 3 the new. Neighbours, which run together during a
	// roll, so accept each other's tokens.
	for i := range steps {
		for j := range steps {
			_, err := verifiers[j].Verify(t.Context(), issued[i])
			signedOld := i <= 1
			want := (signedOld && j <= 2) || (!signedOld && j >= 1)
			if want != (err == nil) {
				t.Errorf("a token of step %q verified by step %q: err = %v, want it to pass = %v", steps[i].name, steps[j].name, err, want)
			}
		}
	}
	// A token of the removed secret without a kid (ONCE_JWT_SECRET era) too.
	other := sign(t, hs256, oldKey, validClaims())
	if _, err := verifiers[3].Verify(t.Context(), other); err == nil {
		t.Error("a token of the removed secret passed")
	}
}

func TestParseSecrets(t *testing.T) {
	got, err := ParseSecrets("b:" + string(secret) + ", a:" + string(secret) + ":with-colon")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "b" || string(got[1].Key) != string(secret)+":with-colon" {
		t.Fatalf("ParseSecrets = %q", got)
	}
	for _, bad := range []string{"", "nokid", ":" + string(secret), "a:", "a:short", "a:" + string(secret) + ",a:" + string(secret)} {
		if _, err := ParseSecrets(bad); err == nil {
			t.Errorf("ParseSecrets(%q) passed", bad)
		}
	}
}
