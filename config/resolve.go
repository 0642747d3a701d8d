package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LookupEnv looks up an environment variable; os.LookupEnv is one.
type LookupEnv func(name string) (string, bool)

// Flags are the settings a command was given on its command line. A nil field is a flag
// the user did not set, so that the environment and the profile apply. There is no flag
// for an inline key or connection string: a secret in the process arguments is visible
// to other users.
type Flags struct {
	Profile          *string        // --profile
	Endpoint         *string        // --endpoint
	KeyFile          *string        // --key-file
	Auth             *string        // --auth: key or aad
	AADTokenFile     *string        // --aad-token-file
	Database         *string        // --database
	Container        *string        // --container
	PreferredRegions *[]string      // --preferred-regions
	ExcludeRegions   *[]string      // --exclude
	E2ETimeout       *time.Duration // --e2e-timeout
	AttemptTimeout   *time.Duration // --attempt-timeout
	NoHealthMemory   *bool          // --no-health-memory
	Output           *string        // -o, --output
	ConnectionMode   *string        // --connection-mode
	HedgingMode      *string        // --hedging
	HedgeThreshold   *time.Duration // --hedge-threshold
	HedgeStep        *time.Duration // --hedge-step
	HedgeMaxRegions  *int           // --hedge-max-regions
	HedgeBudget      *string        // --hedge-budget, a percentage such as "10%"
	WriteRetryPolicy *string        // --write-retries
}

// Sources of a setting, as Settings.Sources reports them; a profile is "profile NAME" and
// an environment variable "env NAME".
const (
	SourceFlag    = "flag"
	SourceDefault = "default"
)

// Settings are the resolved settings of one command.
type Settings struct {
	Profile   string // the profile used; "" if none
	Endpoint  string // "" when no account is configured: see Configured
	Key       Secret
	KeySource string // where the key came from, for people: "COSMOSCTL_KEY", "key_file /path (profile prod)"
	// Auth is AuthKey (sign with the key) or AuthAAD (Azure AD tokens). With AuthAAD the
	// key is neither read nor needed.
	Auth string
	// AADTokenFile is the resolved path of a file holding a pre-acquired Azure AD access
	// token, used instead of the credential chain; "" for the chain. AADToken is its
	// content, read only with AuthAAD. A token from a file is never refreshed.
	AADTokenFile string
	AADToken     Secret
	Database     string
	Container    string
	// PreferredRegions and ExcludeRegions are region names as the user wrote them; the
	// engine matches them to the account's regions.
	PreferredRegions []string
	ExcludeRegions   []string
	E2ETimeout       time.Duration // 0: no end-to-end timeout
	// AttemptTimeout caps each attempt's own timeout; 0 keeps the built-in ladders
	// (point operations 6s → 10s → 65s, metadata and the account lookup shorter).
	AttemptTimeout time.Duration
	// HealthMemory says whether region health and learned hedging thresholds are
	// remembered between commands (default on).
	HealthMemory bool
	Output       string // OutputTable, OutputJSON or OutputNDJSON (see JSONOutput)
	// ConnectionMode is ConnectionGateway (default) or ConnectionDirect.
	ConnectionMode string
	Hedging        Hedging
	WriteRetries   WriteRetries
	// Sources maps each setting, by its name in the profiles file ("endpoint",
	// "hedging.threshold"), plus "profile", to where its value came from: SourceFlag,
	// "env COSMOSCTL_X", "profile NAME" or SourceDefault.
	Sources    map[string]string
	ConfigFile string
	Warnings   []string // for stderr; see File.Warnings
}

// Configured reports whether an account endpoint came from anywhere. Commands use the
// embedded emulator when it did not.
func (s Settings) Configured() bool { return s.Endpoint != "" }

// Source returns where a setting came from, by its name in the profiles file.
func (s Settings) Source(key string) string {
	if src, ok := s.Sources[key]; ok {
		return src
	}
	return SourceDefault
}

// Path returns the profiles file: $COSMOSCTL_CONFIG if set, else cosmosctl/config.toml in
// the user's configuration directory (~/.config on Linux).
func Path(env LookupEnv) (string, error) {
	if p, ok := lookup(env, "COSMOSCTL_CONFIG"); ok {
		return expandHome(p)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the user configuration directory (%v): set COSMOSCTL_CONFIG to the path of the config file", err)
	}
	return filepath.Join(dir, "cosmosctl", "config.toml"), nil
}

// Resolve combines flags, environment and the profiles file at path into the settings of
// one command: flag > environment > profile > default, setting by setting. env may be nil
// for no environment. An environment variable set to "" counts as unset, so that a script
// can clear one with VAR= .
//
// The profile is --profile, else COSMOSCTL_PROFILE, else the file's default_profile, else
// none. A profile asked for by name that does not exist is an error listing those that do.
//
// Endpoint and key follow the same precedence. At one level a separate endpoint or key
// beats a connection string: the connection string is a bundle, and a separate setting
// next to it is the more specific, deliberate choice (COSMOSCTL_ENDPOINT pointing the
// same key at a private endpoint, say). Two ways of giving the key at one level (key and
// key_file, COSMOSCTL_KEY and COSMOSCTL_KEY_FILE) are ambiguous, and an error.
//
// auth (--auth, COSMOSCTL_AUTH) chooses the key or Azure AD. With Azure AD the key is not
// read, and the Azure AD token file (--aad-token-file, COSMOSCTL_AAD_TOKEN_FILE,
// aad_token_file) is, when one is given; with the key, a token file is not read.
func Resolve(path string, flags Flags, env LookupEnv) (Settings, error) {
	f, err := Load(path)
	if err != nil {
		return Settings{}, err
	}
	r := &resolver{env: env, flags: flags, file: f}
	if err := r.pickProfile(); err != nil {
		return Settings{}, err
	}
	if err := r.settings(); err != nil {
		return Settings{}, err
	}
	if err := r.credentials(); err != nil {
		return Settings{}, err
	}
	r.s.ConfigFile = path
	r.s.Warnings = append(append([]string{}, f.Warnings...), r.s.Warnings...)
	return r.s, nil
}

type resolver struct {
	env     LookupEnv
	flags   Flags
	file    *File
	profile Profile // zero when no profile is used
	s       Settings
}

func (r *resolver) pickProfile() error {
	r.s.Sources = map[string]string{}
	name, how, src := "", "", SourceDefault
	if r.flags.Profile != nil && *r.flags.Profile != "" {
		name, how, src = *r.flags.Profile, "--profile", SourceFlag
	} else if v, ok := lookup(r.env, "COSMOSCTL_PROFILE"); ok {
		name, how, src = v, "COSMOSCTL_PROFILE", "env COSMOSCTL_PROFILE"
	} else if r.file.DefaultProfile != "" {
		name, src = r.file.DefaultProfile, "default_profile"
	}
	r.s.Sources["profile"] = src
	if name == "" {
		return nil
	}
	p, ok := r.file.Profiles[name]
	if !ok {
		if !r.file.Exists {
			return fmt.Errorf("profile %q (from %s) does not exist: there is no config file at %s; create the profile with `cosmosctl config set --profile %s endpoint URL`",
				name, how, r.file.Path, name)
		}
		return fmt.Errorf("profile %q (from %s) is not in %s: %s", name, how, r.file.Path, existing(r.file.ProfileNames(), name))
	}
	r.profile, r.s.Profile = p, name
	return nil
}

func existing(names []string, asked string) string {
	if len(names) == 0 {
		return fmt.Sprintf("it has no profiles; create one with `cosmosctl config set --profile %s endpoint URL`", asked)
	}
	return "the profiles are " + strings.Join(names, ", ")
}

func (r *resolver) profileSource() string { return "profile " + r.profile.Name }

// settings resolves everything but the account endpoint and key.
func (r *resolver) settings() error {
	s, p, fl := &r.s, r.profile, r.flags
	str := func(s string) (string, error) { return s, nil }
	steps := []func() error{
		func() (err error) {
			s.Auth, err = pick(r, "auth", fl.Auth, "--auth", "COSMOSCTL_AUTH", parseAuth, p.Auth, AuthKey)
			return
		},
		func() (err error) {
			s.Database, err = pick(r, "database", fl.Database, "--database", "COSMOSCTL_DATABASE", str, p.Database, "")
			return
		},
		func() (err error) {
			s.Container, err = pick(r, "container", fl.Container, "--container", "COSMOSCTL_CONTAINER", str, p.Container, "")
			return
		},
		func() (err error) {
			s.PreferredRegions, err = pickList(r, "preferred_regions", fl.PreferredRegions, "COSMOSCTL_PREFERRED_REGIONS", p.PreferredRegions)
			return
		},
		func() (err error) {
			s.ExcludeRegions, err = pickList(r, "exclude_regions", fl.ExcludeRegions, "COSMOSCTL_EXCLUDE_REGIONS", p.ExcludeRegions)
			return
		},
		func() (err error) {
			s.E2ETimeout, err = pickDuration(r, "e2e_timeout", fl.E2ETimeout, "--e2e-timeout", "COSMOSCTL_E2E_TIMEOUT", p.E2ETimeout)
			return
		},
		func() (err error) {
			s.AttemptTimeout, err = pickDuration(r, "attempt_timeout", fl.AttemptTimeout, "--attempt-timeout", "COSMOSCTL_ATTEMPT_TIMEOUT", p.AttemptTimeout)
			return
		},
		func() (err error) {
			var flag *string
			if fl.NoHealthMemory != nil {
				v := fmt.Sprint(!*fl.NoHealthMemory)
				flag = &v
			}
			s.HealthMemory, err = pick(r, "health_memory", flag, "--no-health-memory", "COSMOSCTL_HEALTH_MEMORY", parseOnOff, p.HealthMemory, true)
			return
		},
		func() (err error) {
			s.Output, err = pick(r, "output", fl.Output, "--output", "COSMOSCTL_OUTPUT", parseOutput, p.Output, OutputTable)
			return
		},
		func() (err error) {
			s.ConnectionMode, err = pick(r, "connection_mode", fl.ConnectionMode, "--connection-mode", "COSMOSCTL_CONNECTION_MODE", parseConnectionMode, p.ConnectionMode, ConnectionGateway)
			return
		},
		func() (err error) {
			s.Hedging.Mode, err = pick(r, "hedging.mode", fl.HedgingMode, "--hedging", "", parseHedgingMode, p.Hedging.Mode, HedgingOff)
			return
		},
		func() (err error) {
			s.Hedging.Threshold, err = pickDuration(r, "hedging.threshold", fl.HedgeThreshold, "--hedge-threshold", "", p.Hedging.Threshold)
			return
		},
		func() (err error) {
			s.Hedging.Step, err = pickDuration(r, "hedging.step", fl.HedgeStep, "--hedge-step", "", p.Hedging.Step)
			return
		},
		func() (err error) {
			s.Hedging.MaxRegions, err = pick(r, "hedging.max_regions", intString(fl.HedgeMaxRegions), "--hedge-max-regions", "", parseMaxRegions, p.Hedging.MaxRegions, 0)
			return
		},
		func() (err error) {
			s.Hedging.BudgetPercent, err = pick(r, "hedging.budget", fl.HedgeBudget, "--hedge-budget", "", parseBudget, p.Hedging.BudgetPercent, 0)
			return
		},
		func() (err error) {
			s.WriteRetries.Policy, err = pick(r, "write_retries.policy", fl.WriteRetryPolicy, "--write-retries", "COSMOSCTL_WRITE_RETRY_POLICY",
				parseWriteRetryPolicy, p.WriteRetries.Policy, WriteRetriesOff)
			return
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// pick resolves one setting given as a string on the command line or in the environment:
// the flag if set, else the environment variable (envName "" for none), else the profile,
// else def. Profile values were validated when the file was loaded; the others are
// parsed here, and an error names the flag or variable.
func pick[T any](r *resolver, key string, flag *string, flagName, envName string, parse func(string) (T, error), prof, def T) (T, error) {
	if flag != nil {
		v, err := parse(*flag)
		if err != nil {
			return def, fmt.Errorf("%s %w", flagName, err)
		}
		r.s.Sources[key] = SourceFlag
		return v, nil
	}
	if s, ok := lookup(r.env, envName); ok {
		v, err := parse(s)
		if err != nil {
			return def, fmt.Errorf("%s %w", envName, err)
		}
		r.s.Sources[key] = "env " + envName
		return v, nil
	}
	if r.profile.IsSet(key) {
		r.s.Sources[key] = r.profileSource()
		return prof, nil
	}
	r.s.Sources[key] = SourceDefault
	return def, nil
}

func pickDuration(r *resolver, key string, flag *time.Duration, flagName, envName string, prof time.Duration) (time.Duration, error) {
	if flag != nil {
		if err := checkDuration(key, *flag); err != nil {
			return 0, fmt.Errorf("%s %w", flagName, err)
		}
		r.s.Sources[key] = SourceFlag
		return *flag, nil
	}
	return pick(r, key, nil, flagName, envName, func(s string) (time.Duration, error) { return parseDuration(key, s) }, prof, 0)
}

func pickList(r *resolver, key string, flag *[]string, envName string, prof []string) ([]string, error) {
	if flag != nil {
		r.s.Sources[key] = SourceFlag
		return cleanList(*flag), nil
	}
	return pick(r, key, nil, "", envName, func(s string) ([]string, error) { return splitList(s), nil }, prof, []string{})
}

func intString(n *int) *string {
	if n == nil {
		return nil
	}
	s := fmt.Sprint(*n)
	return &s
}

// candidate is one place an endpoint or a key may come from. A key is read only when its
// candidate wins, so that a shadowed key file need not exist.
type candidate struct {
	source string // for Sources: SourceFlag, "env X", "profile NAME"
	value  func() (string, error)
	desc   string // for KeySource
}

func constant(v string) func() (string, error) { return func() (string, error) { return v, nil } }

// credentials resolves the endpoint and the key, each from the first candidate present,
// in precedence order; see Resolve for the rules.
func (r *resolver) credentials() error {
	var endpoints, keys []candidate

	// Flags. There is no --key: a secret in the arguments is visible to other users.
	if r.flags.Endpoint != nil {
		ep, err := parseEndpoint(*r.flags.Endpoint)
		if err != nil {
			return fmt.Errorf("--endpoint %w", err)
		}
		endpoints = append(endpoints, candidate{source: SourceFlag, value: constant(ep)})
	}
	if r.flags.KeyFile != nil {
		path := keyFilePath(*r.flags.KeyFile, "")
		keys = append(keys, candidate{SourceFlag, func() (string, error) {
			return r.readKeyFile(path, "--key-file", "check the --key-file path")
		}, "--key-file " + path})
	}

	// Environment: separate variables first, then the connection string.
	if v, ok := lookup(r.env, "COSMOSCTL_ENDPOINT"); ok {
		ep, err := parseEndpoint(v)
		if err != nil {
			return fmt.Errorf("COSMOSCTL_ENDPOINT %w", err)
		}
		endpoints = append(endpoints, candidate{source: "env COSMOSCTL_ENDPOINT", value: constant(ep)})
	}
	key, hasKey := lookup(r.env, "COSMOSCTL_KEY")
	keyFile, hasKeyFile := lookup(r.env, "COSMOSCTL_KEY_FILE")
	switch {
	case hasKey && hasKeyFile:
		return errors.New("COSMOSCTL_KEY and COSMOSCTL_KEY_FILE are both set: unset one")
	case hasKey:
		key = strings.TrimSpace(key)
		if err := checkKey(key); err != nil {
			return fmt.Errorf("COSMOSCTL_KEY %w", err)
		}
		keys = append(keys, candidate{"env COSMOSCTL_KEY", constant(key), "COSMOSCTL_KEY"})
	case hasKeyFile:
		path := keyFilePath(keyFile, "")
		keys = append(keys, candidate{"env COSMOSCTL_KEY_FILE", func() (string, error) {
			return r.readKeyFile(path, "COSMOSCTL_KEY_FILE", "check COSMOSCTL_KEY_FILE")
		}, "COSMOSCTL_KEY_FILE " + path})
	}
	if v, ok := lookup(r.env, "COSMOSCTL_CONNECTION_STRING"); ok {
		ep, k, err := ParseConnectionString(v)
		if err != nil {
			return fmt.Errorf("COSMOSCTL_CONNECTION_STRING %w", err)
		}
		const src = "env COSMOSCTL_CONNECTION_STRING"
		endpoints = append(endpoints, candidate{source: src, value: constant(ep)})
		keys = append(keys, candidate{src, constant(k), "connection string from COSMOSCTL_CONNECTION_STRING"})
	}

	// Profile: endpoint, key or key_file, then the connection string. All validated by Load.
	if p := r.profile; p.Name != "" {
		src := r.profileSource()
		if p.Endpoint != "" {
			endpoints = append(endpoints, candidate{source: src, value: constant(p.Endpoint)})
		}
		switch {
		case p.Key != "":
			keys = append(keys, candidate{src, constant(p.Key.Reveal()), src + " (inline key)"})
		case p.KeyFile != "":
			path := keyFilePath(p.KeyFile, filepath.Dir(r.file.Path))
			fix := fmt.Sprintf("fix key_file of profile %s in %s, or create the file", p.Name, r.file.Path)
			keys = append(keys, candidate{src, func() (string, error) {
				return r.readKeyFile(path, "key_file of "+src, fix)
			}, "key_file " + path + " (" + src + ")"})
		}
		if p.ConnectionString != "" {
			ep, k, _ := ParseConnectionString(p.ConnectionString.Reveal())
			endpoints = append(endpoints, candidate{source: src, value: constant(ep)})
			keys = append(keys, candidate{src, constant(k), "connection string in " + src})
		}
	}

	r.s.Sources["endpoint"], r.s.Sources["key"] = SourceDefault, SourceDefault
	if len(endpoints) > 0 {
		r.s.Endpoint, _ = endpoints[0].value()
		r.s.Sources["endpoint"] = endpoints[0].source
	}
	if err := r.aadTokenFile(); err != nil {
		return err
	}
	// With Azure AD the key is not used, so a key file it names need not exist.
	if len(keys) > 0 && r.s.Auth != AuthAAD {
		k, err := keys[0].value()
		if err != nil {
			return err
		}
		r.s.Key, r.s.KeySource, r.s.Sources["key"] = Secret(k), keys[0].desc, keys[0].source
	}
	return nil
}

// aadTokenFile resolves the Azure AD token file (flag > environment > profile), and
// reads it only when Azure AD is the authentication in use.
func (r *resolver) aadTokenFile() error {
	r.s.Sources["aad_token_file"] = SourceDefault
	var path, source, what, fix string
	if fl := r.flags.AADTokenFile; fl != nil && strings.TrimSpace(*fl) != "" {
		path, source, what = keyFilePath(strings.TrimSpace(*fl), ""), SourceFlag, "--aad-token-file"
		fix = "check the --aad-token-file path"
	} else if v, ok := lookup(r.env, "COSMOSCTL_AAD_TOKEN_FILE"); ok {
		path, source, what = keyFilePath(strings.TrimSpace(v), ""), "env COSMOSCTL_AAD_TOKEN_FILE", "COSMOSCTL_AAD_TOKEN_FILE"
		fix = "check COSMOSCTL_AAD_TOKEN_FILE"
	} else if p := r.profile; p.Name != "" && strings.TrimSpace(p.AADTokenFile) != "" {
		// Relative to the config file, as key_file is.
		path, source = keyFilePath(strings.TrimSpace(p.AADTokenFile), filepath.Dir(r.file.Path)), r.profileSource()
		what = "aad_token_file of " + source
		fix = fmt.Sprintf("fix aad_token_file of profile %s in %s, or create the file", p.Name, r.file.Path)
	} else {
		return nil
	}
	r.s.AADTokenFile, r.s.Sources["aad_token_file"] = path, source
	if r.s.Auth != AuthAAD {
		if r.s.Source("auth") == SourceDefault {
			r.s.Warnings = append(r.s.Warnings, fmt.Sprintf(`%s is set but auth is key (the default), so the token is not used: set COSMOSCTL_AUTH=aad, --auth aad or auth = "aad" in the profile`, what))
		}
		return nil
	}
	tok, err := readTokenFile(path, what, fix)
	if err != nil {
		return err
	}
	r.s.AADToken = Secret(tok)
	return nil
}

// readTokenFile reads a pre-acquired Azure AD access token: the token alone (as
// `az account get-access-token --query accessToken -o tsv` prints it), or the JSON that
// `az account get-access-token` prints by default, whose accessToken it takes. Errors
// never quote the file's content.
func readTokenFile(path, what, fix string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("Azure AD token file %s (%s) does not exist: %s", path, what, fix)
	}
	if err != nil {
		return "", fmt.Errorf("cannot read Azure AD token file %s (%s): %v", path, what, unwrapPath(err))
	}
	tok := strings.TrimSpace(string(data))
	if strings.HasPrefix(tok, "{") {
		var out struct {
			AccessToken string `json:"accessToken"`
		}
		if json.Unmarshal([]byte(tok), &out) != nil || strings.TrimSpace(out.AccessToken) == "" {
			return "", fmt.Errorf("Azure AD token file %s (%s) holds JSON without an accessToken: write the token alone (az account get-access-token --query accessToken -o tsv)", path, what)
		}
		tok = strings.TrimSpace(out.AccessToken)
	}
	if tok == "" {
		return "", fmt.Errorf("Azure AD token file %s (%s) is empty: write an access token to it, e.g. az account get-access-token --resource https://ACCOUNT.documents.azure.com --query accessToken -o tsv > %s", path, what, path)
	}
	return tok, nil
}

// keyFilePath resolves a key file path: "~" is the home directory, and a relative path is
// relative to base (the config file's directory for key_file, so that the file means the
// same from any working directory) or to the working directory when base is "".
func keyFilePath(path, base string) string {
	if full, err := expandHome(path); err == nil {
		path = full
	}
	if base != "" && !filepath.IsAbs(path) {
		path = filepath.Join(base, path)
	}
	return path
}

// readKeyFile reads an account key from a file (see ReadSecretFile), and warns when
// other users can read it. what names where the path came from; fix says what to do when
// the file is missing.
func (r *resolver) readKeyFile(path, what, fix string) (string, error) {
	data, fi, err := ReadSecretFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("key file %s (%s) does not exist: %s", path, what, fix)
	}
	if err != nil {
		return "", fmt.Errorf("cannot read key file %s (%s): %v", path, what, err)
	}
	if w := SecretFileWarning(path, fi); w != "" {
		r.s.Warnings = append(r.s.Warnings, w)
	}
	key := strings.TrimSpace(string(data))
	if err := checkKey(key); err != nil {
		return "", fmt.Errorf("key file %s (%s) %w", path, what, err)
	}
	return key, nil
}

// expandHome expands a leading "~" or "~/": the shell does not when the path follows
// "--key-file=" or comes from a file.
func expandHome(path string) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") && !strings.HasPrefix(path, `~\`) {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand ~: %v", err)
	}
	return filepath.Join(home, path[1:]), nil
}

// lookup reads an environment variable, treating "" as unset.
func lookup(env LookupEnv, name string) (string, bool) {
	if env == nil || name == "" {
		return "", false
	}
	v, ok := env(name)
	if !ok || strings.TrimSpace(v) == "" {
		return "", false
	}
	return v, true
}

// ProfileOutput is the output format the profile a command would use asks for
// (--profile, COSMOSCTL_PROFILE, default_profile), or "" when there is none or the
// profiles file cannot be read. It is for failures that stop a command before its
// settings are resolved (a bad flag): their error still comes in the format asked for.
func ProfileOutput(profileFlag string, env LookupEnv) string {
	path, err := Path(env)
	if err != nil {
		return ""
	}
	f, err := Load(path)
	if err != nil {
		return ""
	}
	r := &resolver{env: env, file: f}
	if profileFlag != "" {
		r.flags.Profile = &profileFlag
	}
	if r.pickProfile() != nil {
		return ""
	}
	return r.profile.Output
}
