package app_test

import (
	"os"
	"testing"

	"github.com/oncehq/once/testsupport/redistest"
)

// TestMain stops the private Redis topologies (a Cluster, a Sentinel) the
// broker tests start.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
