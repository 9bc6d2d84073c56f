package typescript

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/testsupport/apitest"
)

// TestThePackedSDKInstallsAndRuns installs the SDK the way a user outside
// the repository does: `npm pack` (its prepack builds it from nothing), the
// tarball installed into a fresh project in a temporary directory, a script
// compiled with tsc --strict against the package's own type declarations,
// and run against a server: it creates a store through idempotent, with a
// header of its own.
func TestThePackedSDKInstallsAndRuns(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	if _, err := os.Stat("node_modules"); err != nil {
		run(t, npm, "ci", "--no-audit", "--no-fund")
	}
	var pkg struct {
		Name, Version, License string
		DevDependencies        map[string]string
	}
	raw, err := os.ReadFile("package.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &pkg))
	assert.Equal(t, httpapi.License, pkg.License, "the package names the license the spec names")

	// From nothing: the tarball holds what prepack built, not a stale dist.
	require.NoError(t, os.RemoveAll("dist"))
	packDir := t.TempDir()
	run(t, npm, "pack", "--pack-destination", packDir)
	tarballs, err := filepath.Glob(filepath.Join(packDir, "*.tgz"))
	require.NoError(t, err)
	require.Len(t, tarballs, 1, "npm pack makes one tarball")
	tarball := tarballs[0]
	files := tarFiles(t, tarball)
	for _, want := range []string{"package.json", "README.md", "LICENSE", "dist/src/index.js", "dist/src/index.d.ts", "dist/src/schema.d.ts"} {
		assert.Contains(t, files, "package/"+want, "the tarball")
	}
	for _, f := range files {
		assert.False(t, strings.HasPrefix(f, "package/dist/test/") || strings.HasPrefix(f, "package/src/"), "the tarball holds only the built package: %s", f)
	}

	project := t.TempDir()
	for _, name := range []string{"consumer.ts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "consumer", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(project, name), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(project, "package.json"),
		[]byte(`{"name": "consumer", "private": true, "type": "module"}`), 0o644))
	install := exec.CommandContext(t.Context(), npm, "install", "--no-audit", "--no-fund", "--prefer-offline",
		tarball, "typescript@"+pkg.DevDependencies["typescript"], "@types/node@"+pkg.DevDependencies["@types/node"])
	install.Dir = project
	b, err := install.CombinedOutput()
	require.NoError(t, err, "npm install: %s", b)
	tsc := exec.CommandContext(t.Context(), filepath.Join(project, "node_modules", ".bin", "tsc"), "--strict", "-p", ".")
	tsc.Dir = project
	b, err = tsc.CombinedOutput()
	require.NoError(t, err, "tsc --strict: %s", b)

	s := apitest.Memory(t)
	apiKey, apiSecret := apitest.TestCredentials()
	requestID := "packed-" + uuid.NewString()
	node := exec.CommandContext(t.Context(), "node", "consumer.js")
	node.Dir = project
	node.Env = append(os.Environ(), "ONCE_URL="+s.URL, "ONCE_TOKEN="+s.Token, "ONCE_REQUEST_ID="+requestID,
		"ONCE_API_KEY="+apiKey, "ONCE_API_SECRET="+apiSecret, "ONCE_SHOP=packed-"+uuid.NewString())
	b, err = node.CombinedOutput()
	require.NoError(t, err, "node consumer.js: %s", b)
	fields := strings.Fields(string(b))
	require.Len(t, fields, 2, "the consumer prints the store's id and the request id: %s", b)
	assert.Equal(t, requestID, fields[1], "the caller's header reached the server")
	got := s.Do(t, http.MethodGet, "/v1/stores/"+fields[0], nil, nil)
	assert.Equal(t, http.StatusOK, got.Status, "the store the consumer created: %s", got.Body)
}

// tarFiles lists the files of a gzipped tarball.
func tarFiles(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		require.NoError(t, err)
		names = append(names, h.Name)
	}
}
