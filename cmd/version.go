package cmd

import "runtime/debug"

// Set at release time with -ldflags "-X github.com/cosmosctl/cosmosctl/cmd.version=…".
var (
	version = ""
	commit  = ""
	date    = ""
)

func init() {
	if version != "" {
		return
	}
	version = "dev"
	// A `go install …@v1.2.3` build carries its module version in the build info.
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
}
