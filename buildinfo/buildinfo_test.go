package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func toolchain(version string, settings ...string) func() (*debug.BuildInfo, bool) {
	return func() (*debug.BuildInfo, bool) {
		bi := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi, true
	}
}

// TestReadPrefersTheStampedValues: what the linker stamped wins; the
// toolchain's record fills the rest; nothing at all reads as unknown.
func TestReadPrefersTheStampedValues(t *testing.T) {
	vcs := toolchain("(devel)", "vcs.revision", "abc123", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true")
	for _, c := range []struct {
		name                  string
		version, commit, date string
		bi                    func() (*debug.BuildInfo, bool)
		want                  Info
	}{
		{"stamped", "v0.1.0", "f00d", "2026-02-03T00:00:00Z", vcs, Info{Version: "v0.1.0", Commit: "f00d", Date: "2026-02-03T00:00:00Z"}},
		{"go build in a checkout", "", "", "", vcs, Info{Version: "(devel)", Commit: "abc123-dirty", Date: "2026-01-02T03:04:05Z"}},
		{"go install module@v0.2.0", "", "", "", toolchain("v0.2.0"), Info{Version: "v0.2.0", Commit: Unknown, Date: Unknown}},
		{"nothing recorded", "", "", "", func() (*debug.BuildInfo, bool) { return nil, false }, Info{Version: "(devel)", Commit: Unknown, Date: Unknown}},
	} {
		got := read(c.version, c.commit, c.date, c.bi)
		got.Go = ""
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestStringSaysVersionCommitAndDate(t *testing.T) {
	s := Info{Version: "v0.1.0", Commit: "f00d", Date: "2026-02-03T00:00:00Z", Go: "go1.26.8 linux/amd64"}.String()
	for _, want := range []string{"v0.1.0", "f00d", "2026-02-03T00:00:00Z", "go1.26.8"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
}
