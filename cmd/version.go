package cmd

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
)

// Set at release time with -ldflags "-X github.com/cosmosctl/cosmosctl/cmd.version=…"
// (see .goreleaser.yaml); a `go install` build gets them from its build info instead.
var (
	version = ""
	commit  = ""
	date    = ""
)

// thisBuild is what `cosmosctl version` reports of this build (resolveBuildInfo), worked
// out when first needed rather than at every start.
var thisBuild = sync.OnceValue(func() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolveBuildInfo(version, commit, date, bi)
})

// userAgent is what every request to an account carries: the version and the platform,
// so that a support ticket quoting the service's logs says which build sent a request.
func userAgent() string {
	return fmt.Sprintf("cosmosctl/%s (%s/%s; %s)", thisBuild().Version, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// addVersionFlag gives the root command --version, printing what `cosmosctl version`
// prints as a table. The flag is declared here rather than left to cobra so that it has
// no -v shorthand (which operators read as "verbose").
func addVersionFlag(root *cobra.Command) {
	var text strings.Builder
	_ = printVersion(&IOStreams{Out: &text}, thisBuild(), false)
	// cobra prints Version through the version template: the text stands in for both.
	root.Version = text.String()
	root.SetVersionTemplate("{{.Version}}")
	root.Flags().Bool("version", false, "print the version, commit, build date, Go version and platform, as the version command does")
}

// buildInfo is what `cosmosctl version` reports.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// versionJSON is `version -o json`: what is not known is null.
type versionJSON struct {
	Version  string  `json:"version"`
	Commit   *string `json:"commit"`
	Date     *string `json:"date"`
	Go       string  `json:"go"`
	Platform string  `json:"platform"`
}

func (b buildInfo) json() versionJSON {
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return versionJSON{Version: b.Version, Commit: orNull(b.Commit), Date: orNull(b.Date), Go: b.Go, Platform: b.Platform}
}

// pseudoVersion matches a Go module pseudo-version (vX.0.0-20260102150405-abcdef123456,
// vX.Y.Z-pre.0.20260102150405-abcdef123456, vX.Y.(Z+1)-0.20260102150405-abcdef123456),
// which names the commit and its time: what `go install …@main` builds carry.
var pseudoVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+incompatible)?$`)
})

// resolveBuildInfo combines the release ldflags with the Go build info: ldflags win,
// then the module version and the VCS stamp of a build from a checkout (vcs.revision,
// vcs.time), then what a module pseudo-version says. bi may be nil.
func resolveBuildInfo(ldVersion, ldCommit, ldDate string, bi *debug.BuildInfo) buildInfo {
	info := buildInfo{Version: ldVersion, Commit: ldCommit, Date: ldDate,
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if info.Version == "" {
			info.Version = "dev"
		}
		return info
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	modVersion := bi.Main.Version
	if modVersion == "(devel)" {
		modVersion = ""
	}
	if info.Version == "" {
		info.Version = modVersion
	}
	var revision, vcsTime string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision != "" && modified {
		revision += "-dirty"
	}
	if m := pseudoVersionOf(modVersion); m != nil {
		if revision == "" {
			revision = m[2]
		}
		if vcsTime == "" {
			if t, err := time.Parse("20060102150405", m[1]); err == nil {
				vcsTime = t.UTC().Format(time.RFC3339)
			}
		}
	}
	if info.Commit == "" {
		info.Commit = revision
	}
	if info.Date == "" {
		info.Date = vcsTime
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}

// pseudoVersionOf is the submatches of pseudoVersion in v, nil if it is not one.
func pseudoVersionOf(v string) []string {
	if v == "" {
		return nil
	}
	return pseudoVersion().FindStringSubmatch(v)
}

func newVersionCmd(io *IOStreams) *cobra.Command {
	var formats formatFlags
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date, Go version and platform",
		Long: `Print cosmosctl's version, the commit it was built from, the build date, the Go
version and the platform. A release build has them from the release; a build by
` + "`go install`" + ` takes them from the module version and the Go build info; what is
not known is "unknown" in the table and null in JSON.

-o json prints one object: {"version","commit","date","go","platform"}.`,
		Example: `  cosmosctl version
  cosmosctl version -o json | jq -r .version`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			format, err := formats.apply(io, envFormat())
			if err != nil {
				return err
			}
			return printVersion(io, thisBuild(), config.JSONOutput(format))
		},
	}
	formats.register(c.Flags(), config.OutputTable, config.OutputJSON)
	return c
}

func printVersion(io *IOStreams, info buildInfo, asJSON bool) error {
	if asJSON {
		return printJSON(io, info.json())
	}
	unknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	_, err := fmt.Fprintf(io.Out, "cosmosctl %s\ncommit    %s\ndate      %s\ngo        %s\nplatform  %s\n",
		info.Version, unknown(info.Commit), unknown(info.Date), info.Go, info.Platform)
	return err
}
