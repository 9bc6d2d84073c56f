package s3test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// The S3 server the tests run: versitygw (Apache 2.0), an S3 gateway whose
// posix backend keeps buckets as directories. It comes from the Go module
// proxy like any module, so no package or download site is needed.
const (
	gatewayPackage = "github.com/versity/versitygw/cmd/versitygw"
	// GatewayVersion is pinned: the binary is cached under it.
	GatewayVersion = "v1.8.0"
)

// EnsureBinary returns the path of the versitygw binary, building it once
// per machine (a minute on two cores) into the user's cache directory,
// keyed by version, so later test runs start it at once.
// scripts/services.sh builds it ahead (go run ./testsupport/s3test/prebuild).
// Concurrent test binaries take a file lock: one builds, the others wait
// and use its result.
func EnsureBinary() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("s3test: no cache directory for the S3 server: %w", err)
	}
	dir := filepath.Join(cache, "once", "versitygw-"+GatewayVersion)
	bin := filepath.Join(dir, "versitygw")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("s3test: lock the build: %w", err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // built by another test binary while this one waited
	}
	// Built into a directory of its own and renamed into place, so a
	// killed build never leaves a half-written binary under the final name.
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "install", gatewayPackage+"@"+GatewayVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("s3test: go install %s@%s: %w\n%s", gatewayPackage, GatewayVersion, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "versitygw"), bin); err != nil {
		return "", errors.Join(errors.New("s3test: install the S3 server"), err)
	}
	return bin, nil
}
