package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// profileKeys are the settings of a profile, by their dotted names, in the order
// `cosmosctl config show` prints them.
var profileKeys = []string{
	"endpoint", "key", "key_file", "connection_string", "auth", "aad_token_file", "database", "container",
	"preferred_regions", "exclude_regions", "e2e_timeout", "attempt_timeout", "health_memory", "output", "connection_mode",
	"hedging.mode", "hedging.threshold", "hedging.step", "hedging.max_regions", "hedging.budget",
	"write_retries.policy",
}

// SettingKeys returns the names Set accepts: the settings of a profile, then
// "default_profile".
func SettingKeys() []string { return append(append([]string{}, profileKeys...), "default_profile") }

// IsSecret reports whether a setting holds a secret, which must not be passed in process
// arguments.
func IsSecret(key string) bool { return key == "key" || key == "connection_string" }

// credentialKeys are alternatives: setting one removes the others from the profile, so
// that the profile never holds a key that silently does not apply.
var credentialKeys = []string{"key", "key_file", "connection_string"}

var profileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// Set changes one setting of one profile in the file at path and writes the file back,
// creating it (mode 0600) and its directory (0700) if needed. key is a dotted name from
// SettingKeys; an empty value removes the setting (and a group table such as hedging
// that it leaves empty, but never the profile itself). A list (preferred_regions) is given
// comma-separated. Setting key, key_file or connection_string removes the other two.
// "default_profile" is the file's top-level setting, and profile is then ignored; it
// must name a profile in the file.
//
// The file is decoded and re-encoded, so its comments and layout are not kept; other
// profiles and settings are. It is replaced atomically (a temporary file renamed over
// it), so a crash never leaves half a file. Errors never quote a secret value.
func Set(path, profile, key, value string) error {
	doc, err := readDoc(path)
	if err != nil {
		return err
	}
	if key == "default_profile" {
		if value != "" {
			if _, ok := table(doc, "profiles", value); !ok {
				return fmt.Errorf("default_profile %q is not a profile in %s: %s", value, path, existing(docProfiles(doc), value))
			}
			doc["default_profile"] = value
		} else {
			delete(doc, "default_profile")
		}
		return writeDoc(path, doc)
	}
	if !profileName().MatchString(profile) {
		return fmt.Errorf("profile name %q may contain only letters, digits, - and _", profile)
	}
	v, err := settingValue(key, value)
	if err != nil {
		return err
	}
	if _, exists := table(doc, "profiles", profile); !exists && v == nil {
		// Removing must not create the profile (nor make it the default).
		return fmt.Errorf("there is no profile %q in %s, so no %s to remove: %s", profile, path, key, existing(docProfiles(doc), profile))
	}
	profiles := ensureTable(doc, "profiles")
	p := ensureTable(profiles, profile)
	dst, leaf := p, key
	if group, name, ok := strings.Cut(key, "."); ok {
		dst, leaf = ensureTable(p, group), name
	}
	if v == nil {
		delete(dst, leaf)
		// A [profiles.NAME.hedging] header with nothing under it reads as if it meant
		// something. The profile's own table stays: it is still a profile to select, and
		// default_profile may name it.
		for name, sub := range p {
			if t, ok := sub.(map[string]any); ok && len(t) == 0 {
				delete(p, name)
			}
		}
	} else {
		dst[leaf] = v
		if IsCredential(key) {
			for _, alt := range credentialKeys {
				if alt != key {
					delete(p, alt)
				}
			}
		}
	}
	return writeDoc(path, doc)
}

// IsCredential reports whether key is one of the alternative ways of giving the account
// key (key, key_file, connection_string).
func IsCredential(key string) bool {
	for _, k := range credentialKeys {
		if k == key {
			return true
		}
	}
	return false
}

// settingValue validates value for key and returns what to store in the file, or nil to
// remove the setting.
func settingValue(key, value string) (any, error) {
	known := false
	for _, k := range profileKeys {
		known = known || k == key
	}
	if !known {
		return nil, fmt.Errorf("unknown setting %q: valid settings are %s", key, strings.Join(SettingKeys(), ", "))
	}
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var err error
	var out any = strings.TrimSpace(value)
	switch key {
	case "endpoint":
		out, err = parseEndpoint(value)
	case "key":
		err = checkKey(strings.TrimSpace(value))
	case "connection_string":
		_, _, err = ParseConnectionString(value)
	case "auth":
		out, err = parseAuth(value)
	case "preferred_regions", "exclude_regions":
		out = splitList(value)
	case "health_memory":
		out, err = parseOnOff(value)
	case "e2e_timeout", "attempt_timeout", "hedging.threshold", "hedging.step":
		_, err = parseDuration(key, value)
	case "output":
		out, err = parseOutput(value)
	case "connection_mode":
		out, err = parseConnectionMode(value)
	case "hedging.mode":
		var m HedgingMode
		m, err = parseHedgingMode(value)
		out = string(m)
	case "hedging.max_regions":
		var n int
		n, err = parseMaxRegions(value)
		out = int64(n)
	case "hedging.budget":
		_, err = parseBudget(value)
	case "write_retries.policy":
		var p WriteRetryPolicy
		p, err = parseWriteRetryPolicy(value)
		out = string(p)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %w", key, err)
	}
	return out, nil
}

// readDoc decodes the file into a generic document, so that settings this version does
// not change survive the rewrite; a missing file is an empty document.
func readDoc(path string) (map[string]any, error) {
	doc := map[string]any{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read config file %s: %v", path, unwrapPath(err))
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, tomlError(path, err)
	}
	return doc, nil
}

// writeDoc writes the document to a temporary file in the same directory and renames it
// over path. The file is always 0600: it may hold an account key.
func writeDoc(path string, doc map[string]any) (err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target // keep a symlinked config (dotfiles repositories) a symlink
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the config directory %s: %v", dir, unwrapPath(err))
	}
	tmp, err := os.CreateTemp(dir, ".config-*.toml")
	if err != nil {
		return fmt.Errorf("cannot write the config file in %s: %v", dir, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("cannot write the config file %s: %v", path, unwrapPath(err))
	}
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.Indent = ""
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("cannot encode the config file %s: %v", path, err)
	}
	if _, err := tmp.Write(tidy(buf.Bytes())); err != nil {
		return fmt.Errorf("cannot write the config file %s: %v", path, unwrapPath(err))
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("cannot write the config file %s: %v", path, unwrapPath(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot write the config file %s: %v", path, unwrapPath(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot replace the config file %s: %v", path, err)
	}
	return nil
}

func table(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		t, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = t
	}
	return m, true
}

// ensureTable returns m[key] as a table, creating it, or replacing a value that is not a
// table (which Load would have rejected anyway).
func ensureTable(m map[string]any, key string) map[string]any {
	if t, ok := m[key].(map[string]any); ok {
		return t
	}
	t := map[string]any{}
	m[key] = t
	return t
}

func docProfiles(doc map[string]any) []string {
	profiles, _ := table(doc, "profiles")
	f := &File{Profiles: map[string]Profile{}}
	for n := range profiles {
		f.Profiles[n] = Profile{}
	}
	return f.ProfileNames()
}

// ReadDefaultProfile returns the file's default_profile, "" if it has none or there is no
// file. It checks only the TOML syntax, so that `config set` can repair a file whose
// settings Load rejects.
func ReadDefaultProfile(path string) (string, error) {
	doc, err := readDoc(path)
	if err != nil {
		return "", err
	}
	s, _ := doc["default_profile"].(string)
	return s, nil
}

// tidy lays the encoder's output out as a person would write it: no empty [profiles]
// header, one blank line before each table. The encoder writes every value on one line,
// so a line starting with "[" is always a table header and no blank line is inside a value.
func tidy(data []byte) []byte {
	var out bytes.Buffer
	var lines []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	for i, line := range lines {
		if line == "[profiles]" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "[") {
			continue // a header with no settings of its own
		}
		if strings.HasPrefix(line, "[") && out.Len() > 0 {
			out.WriteString("\n")
		}
		out.WriteString(line + "\n")
	}
	return out.Bytes()
}
