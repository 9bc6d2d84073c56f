package gotest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/oncehq/once/testsupport/apitest"
)

const (
	sdkModule = "github.com/oncehq/once/sdk/go"
	sdkDir    = "../go"
	// maxConsumerModules bounds the modules a consumer's go.sum lists once
	// it has the SDK (the SDK must not drag the service in): the SDK, its dependencies and their go.mod
	// files, nothing of the service.
	maxConsumerModules = 10
)

// TestAConsumerGoGetsTheSDK installs the SDK the way a user outside the
// repository does: a fresh module in a temporary directory `go get`s it
// from a module proxy (a file proxy holding this checkout's sdk/go; its
// third-party dependencies come from the module cache or the public
// proxy), builds a program that creates a store through once.Idempotent,
// and runs it against a server. Its go.sum must stay small, and `go mod
// tidy` must leave its go line at the SDK's.
func TestAConsumerGoGetsTheSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository")
	}
	proxy := t.TempDir()
	version := publish(t, proxy, sdkModule, sdkDir)
	consumer, gocmd := consumerModule(t, "GOPROXY=file://"+filepath.ToSlash(proxy)+",https://proxy.golang.org")
	gocmd("get", sdkModule+"@"+version)
	gocmd("mod", "tidy")
	gocmd("build", "-o", "consumer", ".")

	sum, err := os.ReadFile(filepath.Join(consumer, "go.sum"))
	require.NoError(t, err)
	modules := sumModules(sum)
	t.Logf("the consumer's go.sum lists %d modules: %s", len(modules), strings.Join(modules, " "))
	assert.LessOrEqual(t, len(modules), maxConsumerModules, "the consumer's go.sum:\n%s", sum)
	assert.Contains(t, modules, sdkModule)
	for _, m := range modules {
		if m != sdkModule {
			assert.False(t, strings.HasPrefix(m, "github.com/oncehq/"), "nothing of the service reaches a consumer: %s", m)
		}
	}

	goLine := func(path string) string {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := modfile.ParseLax(path, raw, nil)
		require.NoError(t, err)
		require.NotNil(t, f.Go, "%s has no go line", path)
		return f.Go.Version
	}
	assert.Equal(t, goLine(filepath.Join(sdkDir, "go.mod")), goLine(filepath.Join(consumer, "go.mod")),
		"the consumer's go line moves to the SDK's, no further")
	dir := strings.TrimSpace(gocmd("list", "-m", "-f", "{{.Dir}}", sdkModule))
	license, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
	require.NoError(t, err, "the SDK a consumer gets carries the license")
	want, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(license))
	t.Logf("linked into the consumer:\n%s", gocmd("version", "-m", "consumer"))

	s := apitest.Memory(t)
	apiKey, apiSecret := apitest.TestCredentials()
	run := exec.CommandContext(t.Context(), filepath.Join(consumer, "consumer"))
	run.Env = append(os.Environ(), "ONCE_URL="+s.URL, "ONCE_TOKEN="+s.Token,
		"ONCE_API_KEY="+apiKey, "ONCE_API_SECRET="+apiSecret, "ONCE_SHOP=consumer-"+uuid.NewString())
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	require.NoError(t, err, "the consumer: %s", stderr.String())
	storeID, err := uuid.Parse(strings.TrimSpace(string(out)))
	require.NoError(t, err, "the consumer prints the new store's id: %q", out)
	got := s.Do(t, http.MethodGet, "/v1/stores/"+storeID.String(), nil, nil)
	assert.Equal(t, http.StatusOK, got.Status, "the store the consumer created: %s", got.Body)
}

// TestAConsumerBuildsTheSDKFromACheckout follows the README's checkout
// route: a require and a replace naming this checkout's sdk/go, then `go
// mod tidy` (which writes the go.sum lines of the SDK's dependencies), then
// `go build`.
func TestAConsumerBuildsTheSDKFromACheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository")
	}
	dir, err := filepath.Abs(sdkDir)
	require.NoError(t, err)
	_, gocmd := consumerModule(t, "GOPROXY=https://proxy.golang.org")
	gocmd("mod", "edit", "-require="+sdkModule+"@v0.0.0", "-replace="+sdkModule+"="+dir)
	gocmd("mod", "tidy")
	gocmd("build", "-o", "consumer", ".")
}

// consumerModule makes a fresh module outside the repository holding
// testdata/consumer, with an old go line (the SDK's requirements decide how
// far it moves), and returns its directory and a way to run the go command
// in it, with goproxy (GOPROXY=...) and nothing of this repository's
// environment.
func consumerModule(t *testing.T, goproxy string) (dir string, gocmd func(args ...string) string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	dir = t.TempDir()
	main, err := os.ReadFile("testdata/consumer/main.go")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), main, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/consumer\n\ngo 1.22\n"), 0o644))
	env := append(os.Environ(), goproxy,
		// Our module is in no checksum database; the others are checked
		// against the public one as usual.
		"GONOSUMDB=github.com/oncehq/once", "GOPRIVATE=", "GONOPROXY=",
		"GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=",
	)
	return dir, func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
}

// publish lays out the module in dir as a file module proxy serves it
// (<module>/@v/list, .info, .mod, .zip) and returns its version: a
// pseudo-version named after the content, because the module cache never
// forgets a version and a changed SDK must not meet a stale copy of itself.
// Like the go command for a module in a subdirectory, it adds the
// repository's LICENSE.
func publish(t *testing.T, proxy, path, dir string) string {
	t.Helper()
	checked, err := modzip.CheckDir(dir)
	require.NoError(t, err)
	require.NoError(t, checked.Err(), "the module zip would leave files out")
	files := []modzip.File{diskFile{zipPath: "LICENSE", path: filepath.Join(dir, "..", "..", "LICENSE")}}
	for _, p := range checked.Valid { // paths in dir, as the OS names them
		name, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		require.NotEqual(t, "LICENSE", name, "the module has a LICENSE of its own: publish adds the repository's")
		files = append(files, diskFile{zipPath: filepath.ToSlash(name), path: p})
	}
	// The version is named after the zip made with a placeholder version.
	var placeholder bytes.Buffer
	require.NoError(t, modzip.Create(&placeholder, module.Version{Path: path, Version: "v0.0.0"}, files))
	sum := sha256.Sum256(placeholder.Bytes())
	version := module.PseudoVersion("v0", "", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), hex.EncodeToString(sum[:])[:12])

	escaped, err := module.EscapePath(path)
	require.NoError(t, err)
	v := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	require.NoError(t, os.MkdirAll(v, 0o755))
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	info, err := json.Marshal(map[string]any{"Version": version, "Time": "2000-01-01T00:00:00Z"})
	require.NoError(t, err)
	zf, err := os.Create(filepath.Join(v, version+".zip"))
	require.NoError(t, err)
	require.NoError(t, modzip.Create(zf, module.Version{Path: path, Version: version}, files))
	require.NoError(t, zf.Close())
	require.NoError(t, os.WriteFile(filepath.Join(v, version+".mod"), mod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(v, version+".info"), info, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(v, "list"), []byte(version+"\n"), 0o644))
	return version
}

// diskFile is a file of the module zip, read from disk.
type diskFile struct{ zipPath, path string }

func (f diskFile) Path() string                 { return f.zipPath }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.path) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }

// sumModules is the distinct module paths a go.sum lists.
func sumModules(sum []byte) []string {
	seen := map[string]bool{}
	var modules []string
	sc := bufio.NewScanner(bytes.NewReader(sum))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && !seen[fields[0]] {
			seen[fields[0]] = true
			modules = append(modules, fields[0])
		}
	}
	return modules
}
