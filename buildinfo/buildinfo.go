// Package buildinfo says which build of once runs: the version, commit and
// build date that `make build` and `make release` stamp into the binary with
// the linker, or else what the Go toolchain recorded (the module version and
// the VCS revision and time of a plain `go build` in a checkout). `once
// version`, `once --version` and the once_build_info metric all read it.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamped by the linker (see the Makefile's LDFLAGS):
//
//	-X github.com/oncehq/once/buildinfo.version=v0.1.0
//	-X github.com/oncehq/once/buildinfo.commit=<full hash>
//	-X github.com/oncehq/once/buildinfo.date=<RFC 3339, UTC>
var version, commit, date string

// Unknown stands for what no source says.
const Unknown = "unknown"

// Info describes the running build.
type Info struct {
	Version string // a tag (v0.1.0), git describe's output, or "(devel)"
	Commit  string
	Date    string // the build's date, or the commit's for an unstamped build
	Go      string // the Go version and platform
}

// Read returns the running build's Info: the stamped values first, then
// the toolchain's.
func Read() Info {
	return read(version, commit, date, debug.ReadBuildInfo)
}

func read(version, commit, date string, buildInfo func() (*debug.BuildInfo, bool)) Info {
	info := Info{Version: version, Commit: commit, Date: date, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := buildInfo(); ok {
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if info.Version == "" && bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			info.Commit = settings["vcs.revision"]
			if info.Commit != "" && settings["vcs.modified"] == "true" {
				info.Commit += "-dirty"
			}
		}
		if info.Date == "" {
			info.Date = settings["vcs.time"]
		}
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	if info.Date == "" {
		info.Date = Unknown
	}
	return info
}

// String is the line `once version` prints.
func (i Info) String() string {
	return fmt.Sprintf("once %s (commit %s, built %s, %s)", i.Version, i.Commit, i.Date, i.Go)
}
