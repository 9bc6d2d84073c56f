package netguard

import (
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain"
)

func TestLookupErrorTellsNoSuchNameFromNoAnswer(t *testing.T) {
	assert.NoError(t, lookupError(nil))
	assert.NoError(t, lookupError(&net.DNSError{Err: "no such host", Name: "x.example", IsNotFound: true}),
		"a name that does not exist has no addresses")
	for _, err := range []error{
		&net.DNSError{Err: "i/o timeout", Name: "x.example", IsTimeout: true},
		&net.DNSError{Err: "server misbehaving", Name: "x.example", IsTemporary: true},
		errors.New("anything else"),
	} {
		assert.True(t, domain.IsCode(lookupError(err), domain.CodeUnavailable), "%v", err)
	}
}
