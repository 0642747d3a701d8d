package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const aadProfile = `
default_profile = "aad"

[profiles.aad]
endpoint = "https://myaccount.documents.azure.com:443/"
auth = "aad"
aad_token_file = "ci.token"
key_file = "missing.key"

[profiles.keyed]
endpoint = "https://myaccount.documents.azure.com:443/"
key = "` + emulatorKey + `"
aad_token_file = "ci.token"
`

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestResolveAuthPrecedence(t *testing.T) {
	path := writeConfig(t, aadProfile)
	writeFile(t, filepath.Join(filepath.Dir(path), "ci.token"), "profile-token\n")
	cases := []struct {
		name   string
		flags  Flags
		env    env
		want   string
		source string
	}{
		{"default is key", Flags{Profile: ptr("keyed")}, env{}, AuthKey, SourceDefault},
		{"profile", Flags{}, env{}, AuthAAD, "profile aad"},
		{"environment beats profile", Flags{}, env{"COSMOSCTL_AUTH": "KEY", "COSMOSCTL_KEY": emulatorKey}, AuthKey, "env COSMOSCTL_AUTH"},
		{"flag beats environment", Flags{Auth: ptr("aad")}, env{"COSMOSCTL_AUTH": "key"}, AuthAAD, SourceFlag},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(path, tc.flags, tc.env.lookup)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, s, "auth", tc.want, s.Auth, tc.source)
		})
	}
}

func TestResolveReadsTheAADTokenFileOnlyForAzureAD(t *testing.T) {
	path := writeConfig(t, aadProfile)
	dir := filepath.Dir(path)
	writeFile(t, filepath.Join(dir, "ci.token"), "profile-token\n")

	// The profile's file is relative to the config file; its key_file, which does not
	// exist, is not read: with Azure AD the key is not used.
	s, err := Resolve(path, Flags{}, env{}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	if s.AADToken.Reveal() != "profile-token" || s.AADTokenFile != filepath.Join(dir, "ci.token") || s.Source("aad_token_file") != "profile aad" || s.Key != "" {
		t.Fatalf("profile token file: %q from %s (%s), key %q", s.AADToken, s.AADTokenFile, s.Source("aad_token_file"), s.Key)
	}

	// The environment beats the profile, and the JSON that az account get-access-token
	// prints is understood.
	envFile := writeFile(t, filepath.Join(t.TempDir(), "az.json"), `{"accessToken": "json-token", "expiresOn": "2025-01-01 12:00:00.000000", "tokenType": "Bearer"}`)
	s, err = Resolve(path, Flags{}, env{"COSMOSCTL_AAD_TOKEN_FILE": envFile}.lookup)
	if err != nil || s.AADToken.Reveal() != "json-token" || s.Source("aad_token_file") != "env COSMOSCTL_AAD_TOKEN_FILE" {
		t.Fatalf("env token file: %q (%s), %v", s.AADToken, s.Source("aad_token_file"), err)
	}

	// The flag beats the environment.
	flagFile := writeFile(t, filepath.Join(t.TempDir(), "flag.token"), "flag-token")
	s, err = Resolve(path, Flags{AADTokenFile: &flagFile}, env{"COSMOSCTL_AAD_TOKEN_FILE": envFile}.lookup)
	if err != nil || s.AADToken.Reveal() != "flag-token" || s.Source("aad_token_file") != SourceFlag {
		t.Fatalf("flag token file: %q (%s), %v", s.AADToken, s.Source("aad_token_file"), err)
	}

	// With key auth the file is not read (so it need not exist), and a token file next
	// to the default auth gets a warning that it is unused.
	s, err = Resolve(path, Flags{Profile: ptr("keyed")}, env{"COSMOSCTL_AAD_TOKEN_FILE": filepath.Join(dir, "absent")}.lookup)
	if err != nil || s.AADToken != "" || s.Key.Reveal() != emulatorKey {
		t.Fatalf("key auth with a token file: token %q key %q, %v", s.AADToken, s.Key, err)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "COSMOSCTL_AAD_TOKEN_FILE is set but auth is key") {
		t.Fatalf("warnings %q", s.Warnings)
	}
}

func TestResolveAADTokenFileErrors(t *testing.T) {
	path := writeConfig(t, aadProfile)
	dir := t.TempDir()
	empty := writeFile(t, filepath.Join(dir, "empty"), " \n")
	noToken := writeFile(t, filepath.Join(dir, "no-token.json"), `{"tokenType": "Bearer"}`)
	cases := []struct {
		name string
		env  env
		want []string
	}{
		{"missing file", env{"COSMOSCTL_AAD_TOKEN_FILE": filepath.Join(dir, "nope")}, []string{"does not exist", "COSMOSCTL_AAD_TOKEN_FILE"}},
		{"missing profile file", env{}, []string{"does not exist", "aad_token_file of profile aad"}},
		{"empty file", env{"COSMOSCTL_AAD_TOKEN_FILE": empty}, []string{"is empty", "az account get-access-token"}},
		{"JSON without a token", env{"COSMOSCTL_AAD_TOKEN_FILE": noToken}, []string{"without an accessToken"}},
		{"bad auth", env{"COSMOSCTL_AUTH": "bogus"}, []string{`COSMOSCTL_AUTH must be key or aad, not "bogus"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(path, Flags{}, tc.env.lookup)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("error %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadAndSetValidateAuth(t *testing.T) {
	if _, err := Load(writeConfig(t, "[profiles.p]\nauth = \"oauth\"\n")); err == nil || !strings.Contains(err.Error(), `auth must be key or aad, not "oauth"`) {
		t.Fatalf("Load with a bad auth: %v", err)
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := Set(path, "p", "auth", "bogus"); err == nil {
		t.Fatal("Set accepted auth = bogus")
	}
	if err := Set(path, "p", "auth", "AAD"); err != nil {
		t.Fatal(err)
	}
	if err := Set(path, "p", "aad_token_file", "ci.token"); err != nil {
		t.Fatal(err)
	}
	if err := Set(path, "p", "key", emulatorKey); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Profiles["p"]; p.Auth != AuthAAD || p.AADTokenFile != "ci.token" || p.Key.Reveal() != emulatorKey {
		t.Fatalf("profile after set: auth %q token file %q key set %v", p.Auth, p.AADTokenFile, p.Key != "")
	}
}
