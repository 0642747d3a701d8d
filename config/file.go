package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// File is the profiles file as read from disk.
type File struct {
	Path string
	// Exists is false when there is no file at Path, which is not an error: there are
	// simply no profiles.
	Exists         bool
	DefaultProfile string
	Profiles       map[string]Profile
	// Warnings are problems that do not stop a command, such as an inline key in a file
	// other users can read. Commands print them on stderr.
	Warnings []string
}

// Profile is one [profiles.NAME] table, validated.
type Profile struct {
	Name             string
	Endpoint         string
	Key              Secret // inline key
	KeyFile          string // as written; "~" and relative paths are resolved by Resolve
	ConnectionString Secret
	Auth             string // AuthKey or AuthAAD; "" when not set
	AADTokenFile     string // as written, resolved like KeyFile
	Database         string
	Container        string
	PreferredRegions []string
	ExcludeRegions   []string
	E2ETimeout       time.Duration
	AttemptTimeout   time.Duration
	HealthMemory     bool
	ConnectionMode   string
	Output           string
	Hedging          Hedging
	WriteRetries     WriteRetries
	// set holds the dotted names of the settings the file gives ("endpoint",
	// "hedging.threshold"), so that an explicit empty list still counts as set.
	set map[string]bool
}

// IsSet reports whether the profile gives a setting, by its dotted name.
func (p Profile) IsSet(key string) bool { return p.set[key] }

// ProfileNames returns the names of the profiles, sorted.
func (f *File) ProfileNames() []string {
	names := make([]string, 0, len(f.Profiles))
	for n := range f.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type rawFile struct {
	DefaultProfile string                `toml:"default_profile"`
	Profiles       map[string]rawProfile `toml:"profiles"`
}

type rawProfile struct {
	Endpoint         string   `toml:"endpoint"`
	Key              string   `toml:"key"`
	KeyFile          string   `toml:"key_file"`
	ConnectionString string   `toml:"connection_string"`
	Auth             string   `toml:"auth"`
	AADTokenFile     string   `toml:"aad_token_file"`
	Database         string   `toml:"database"`
	Container        string   `toml:"container"`
	PreferredRegions []string `toml:"preferred_regions"`
	ExcludeRegions   []string `toml:"exclude_regions"`
	E2ETimeout       string   `toml:"e2e_timeout"`
	AttemptTimeout   string   `toml:"attempt_timeout"`
	HealthMemory     bool     `toml:"health_memory"`
	Output           string   `toml:"output"`
	ConnectionMode   string   `toml:"connection_mode"`
	Hedging          struct {
		Mode       string `toml:"mode"`
		Threshold  string `toml:"threshold"`
		Step       string `toml:"step"`
		MaxRegions int    `toml:"max_regions"`
		Budget     string `toml:"budget"`
	} `toml:"hedging"`
	WriteRetries struct {
		Policy string `toml:"policy"`
	} `toml:"write_retries"`
}

// Load reads and validates the profiles file. A missing file is no error: it returns a
// File with no profiles and Exists false. Unknown settings are errors, because a
// misspelt setting that silently does nothing would send a command to the wrong account
// or region.
func Load(path string) (*File, error) {
	f := &File{Path: path, Profiles: map[string]Profile{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read config file %s: %v", path, unwrapPath(err))
	}
	f.Exists = true
	var raw rawFile
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, tomlError(path, err)
	}
	if unknown := topmost(md.Undecoded()); len(unknown) > 0 {
		return nil, fmt.Errorf("config file %s: unknown setting %s: valid settings are default_profile and, in a [profiles.NAME] table, %s",
			path, strings.Join(unknown, ", "), strings.Join(profileKeys, ", "))
	}
	f.DefaultProfile = raw.DefaultProfile
	set := map[string]map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 3 && k[0] == "profiles" {
			if set[k[1]] == nil {
				set[k[1]] = map[string]bool{}
			}
			set[k[1]][strings.Join(k[2:], ".")] = true
		}
	}
	inlineSecret := false
	for name, rp := range raw.Profiles {
		p, err := rp.validate(name, set[name])
		if err != nil {
			return nil, fmt.Errorf("config file %s: profile %s: %v", path, name, err)
		}
		f.Profiles[name] = p
		inlineSecret = inlineSecret || p.Key != "" || p.ConnectionString != ""
	}
	if f.DefaultProfile != "" {
		if _, ok := f.Profiles[f.DefaultProfile]; !ok {
			return nil, fmt.Errorf("config file %s: default_profile %q is not a profile in the file (%s): fix default_profile or add the profile",
				path, f.DefaultProfile, listOrNone(f.ProfileNames()))
		}
	}
	if inlineSecret && runtime.GOOS != "windows" {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			f.Warnings = append(f.Warnings, fmt.Sprintf("config file %s holds an account key and other users can read it: run chmod 600 %s", path, path))
		}
	}
	return f, nil
}

func (rp rawProfile) validate(name string, set map[string]bool) (Profile, error) {
	p := Profile{
		Name: name, Database: rp.Database, Container: rp.Container, KeyFile: rp.KeyFile, AADTokenFile: rp.AADTokenFile,
		Key: Secret(strings.TrimSpace(rp.Key)), ConnectionString: Secret(rp.ConnectionString),
		PreferredRegions: cleanList(rp.PreferredRegions), ExcludeRegions: cleanList(rp.ExcludeRegions),
		set: set,
	}
	var err error
	check := func(key string, f func() error) {
		if err == nil && set[key] {
			if e := f(); e != nil {
				err = fmt.Errorf("%s %w", key, e)
			}
		}
	}
	check("endpoint", func() (e error) { p.Endpoint, e = parseEndpoint(rp.Endpoint); return })
	check("key", func() error { return checkKey(p.Key.Reveal()) })
	check("connection_string", func() error { _, _, e := ParseConnectionString(rp.ConnectionString); return e })
	check("auth", func() (e error) { p.Auth, e = parseAuth(rp.Auth); return })
	check("e2e_timeout", func() (e error) { p.E2ETimeout, e = parseDuration("e2e_timeout", rp.E2ETimeout); return })
	check("attempt_timeout", func() (e error) {
		p.AttemptTimeout, e = parseDuration("attempt_timeout", rp.AttemptTimeout)
		return
	})
	check("health_memory", func() error { p.HealthMemory = rp.HealthMemory; return nil })
	check("output", func() (e error) { p.Output, e = parseOutput(rp.Output); return })
	check("connection_mode", func() (e error) { p.ConnectionMode, e = parseConnectionMode(rp.ConnectionMode); return })
	check("hedging.mode", func() (e error) { p.Hedging.Mode, e = parseHedgingMode(rp.Hedging.Mode); return })
	check("hedging.threshold", func() (e error) {
		p.Hedging.Threshold, e = parseDuration("hedging.threshold", rp.Hedging.Threshold)
		return
	})
	check("hedging.step", func() (e error) { p.Hedging.Step, e = parseDuration("hedging.step", rp.Hedging.Step); return })
	check("hedging.max_regions", func() error {
		p.Hedging.MaxRegions = rp.Hedging.MaxRegions
		return checkMaxRegions(p.Hedging.MaxRegions)
	})
	check("hedging.budget", func() (e error) { p.Hedging.BudgetPercent, e = parseBudget(rp.Hedging.Budget); return })
	check("write_retries.policy", func() (e error) {
		p.WriteRetries.Policy, e = parseWriteRetryPolicy(rp.WriteRetries.Policy)
		return
	})
	if err != nil {
		return p, err
	}
	// key and key_file are two ways of giving the same thing: neither is more specific,
	// so a profile with both is ambiguous. (A connection string and a key are not: see
	// Resolve.)
	if set["key"] && set["key_file"] {
		return p, errors.New("sets both key and key_file: keep one")
	}
	return p, nil
}

// tomlError turns a decoding error into one line naming the file and the line.
func tomlError(path string, err error) error {
	msg := strings.TrimPrefix(oneLine(err.Error()), "toml: ")
	var pe toml.ParseError
	if errors.As(err, &pe) && !strings.HasPrefix(msg, "line ") {
		msg = fmt.Sprintf("line %d: %s", pe.Position.Line, msg)
	}
	return fmt.Errorf("config file %s: %s: fix the file (TOML syntax, durations as strings such as \"300ms\")", path, msg)
}

// topmost keeps the unknown keys whose parent is known: "prod" rather than "prod" and
// "prod.endpoint".
func topmost(keys []toml.Key) []string {
	unknown := map[string]bool{}
	for _, k := range keys {
		unknown[k.String()] = true
	}
	var out []string
	for _, k := range keys {
		if len(k) > 1 && unknown[k[:len(k)-1].String()] {
			continue
		}
		out = append(out, fmt.Sprintf("%q", k.String()))
	}
	return out
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "there are none"
	}
	return "profiles: " + strings.Join(names, ", ")
}
