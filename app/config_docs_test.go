package app

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigurationDocIsGenerated fails when the settings tables of
// docs/configuration.md differ from what the declarations of the groups
// generate; `make config-doc` rewrites them.
func TestConfigurationDocIsGenerated(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	_, rest, found := strings.Cut(string(doc), ConfigDocBegin+"\n\n")
	committed, _, foundEnd := strings.Cut(rest, "\n"+ConfigDocEnd)
	require.True(t, found && foundEnd, "docs/configuration.md has lost its settings markers")
	assert.Equal(t, ConfigMarkdown(), committed, "docs/configuration.md is stale: run make config-doc")
}
