// Package nodetest runs what tests need from Node.js: stock npm packages
// (a BullMQ worker, a Standard Webhooks receiver), each in a Node.js
// project of its own whose versions its package-lock.json pins. Require
// installs a project's packages (npm ci into its git-ignored
// node_modules) the first time a test needs them.
//
// Without node and npm the tests skip, unless CI is set: there they fail.
package nodetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Require makes sure node, npm and the packages of the project in dir
// are there: it skips t when node or npm is missing (fails it when CI is
// set; why says what needs them), and runs `npm ci` when node_modules
// does not match package-lock.json. Concurrent test processes install
// once: the install holds a file lock.
func Require(t testing.TB, dir, why string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (CI is set): %s", tool, why)
			}
			t.Skipf("%s is not installed: %s (they fail instead when CI is set)", tool, why)
		}
	}
	if err := install(dir); err != nil {
		t.Fatalf("install the packages of %s: %v", dir, err)
	}
}

// installTimeout bounds `npm ci` (a cold npm cache downloads a few MB).
const installTimeout = 5 * time.Minute

// install runs `npm ci` in dir unless node_modules was installed from
// the current package-lock.json (a stamp file records its hash).
func install(dir string) error {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	stamp := filepath.Join(dir, "node_modules", ".once-installed-from")
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want {
		return nil
	}

	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want {
		return nil // another process installed while we waited
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	// --ignore-scripts: nothing needs compiling (msgpackr falls back to
	// JavaScript), and no install script runs on this machine.
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out.String())
	}
	return os.WriteFile(stamp, []byte(want), 0o644)
}

// lockFile takes an exclusive lock on path, creating it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
