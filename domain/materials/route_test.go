package materials_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/materials"
)

// A transfer goes to its source's host: lowercased, its port kept only
// when it is not the scheme's default.
func TestTransferRouteIsTheSourcesHost(t *testing.T) {
	for raw, want := range map[string]string{
		"https://CDN.Example.com/a.jpg":      "material/cdn.example.com",
		"https://cdn.example.com:443/a.jpg":  "material/cdn.example.com",
		"http://cdn.example.com:80/a.jpg":    "material/cdn.example.com",
		"http://cdn.example.com:8080/a.jpg":  "material/cdn.example.com:8080",
		"https://cdn.example.com:80/a.jpg":   "material/cdn.example.com:80",
		"https://[2001:DB8::1]:8443/a.jpg":   "material/[2001:db8::1]:8443",
		"https://[2001:db8::1]/a.jpg":        "material/2001:db8::1",
		"HTTPS://files.example.org:443/x?y=": "material/files.example.org",
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		route := materials.TransferRoute(u)
		assert.Equal(t, want, route.Destination.String(), raw)
		assert.Empty(t, route.OrderingKey, raw)
	}
}
