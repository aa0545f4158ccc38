package cli

import (
	"runtime"
	"runtime/debug"
)

// version is set at link time for releases (-ldflags "-X
// github.com/spate-io/spate/internal/cli.version=v1.2.3"); otherwise the
// module version from the build info, or "devel".
var version = ""

// versionLine says what this binary is: "spate v1.2.3 (commit 1a2b3c4d5e6f,
// modified, go1.26.8 linux/amd64)".
func versionLine() string {
	v, commit, dirty := version, "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	out := "spate " + v + " ("
	if commit != "" {
		out += "commit " + commit[:min(12, len(commit))]
		if dirty {
			out += ", modified"
		}
		out += ", "
	}
	return out + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}
