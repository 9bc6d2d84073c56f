package apitest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The scan finds an API key's secret in any text, and not its prefix
// alone, which lists and saved responses show.
func TestTheScanFindsAnAPIKey(t *testing.T) {
	const secret = "once_sk_4k9z0q2m7x1c_Jx3t8yV0bQ2nR5wK7pL1sD9fG4hA6cE8uZ0iM3oN5qT"
	assert.True(t, carriesSecret(`{"msg":"x","token":"`+secret+`"}`))
	assert.True(t, carriesSecret("Authorization: Bearer "+secret))
	assert.False(t, carriesSecret(`{"prefix":"once_sk_4k9z0q2m7x1c"}`))
}
