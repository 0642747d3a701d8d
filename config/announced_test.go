package config

import (
	"strings"
	"testing"
)

func TestAnnouncedSettingsComeAfterEverythingConfigured(t *testing.T) {
	announced := Announced{By: "the cosmosctl emulator at http://127.0.0.1:8081", Key: Secret(emulatorKey), Database: "app", Container: "items"}
	const by = "announced by the cosmosctl emulator at http://127.0.0.1:8081"
	cases := []struct {
		name             string
		flags            Flags
		env              env
		wantTaken        string
		key, keySource   string
		database, dbSrc  string
		container, coSrc string
	}{
		{name: "nothing configured: all three announced", env: env{"COSMOSCTL_ENDPOINT": "http://127.0.0.1:8081"},
			wantTaken: "key,database,container",
			key:       emulatorKey, keySource: "the well-known emulator key, " + by,
			database: "app", dbSrc: by, container: "items", coSrc: by},
		{name: "a key from the environment wins", env: env{"COSMOSCTL_ENDPOINT": "http://127.0.0.1:8081", "COSMOSCTL_KEY": otherKey},
			wantTaken: "database,container",
			key:       otherKey, keySource: "COSMOSCTL_KEY",
			database: "app", dbSrc: by, container: "items", coSrc: by},
		{name: "a database flag wins, the container is still announced", flags: Flags{Database: ptr("shop")}, env: env{"COSMOSCTL_ENDPOINT": "http://127.0.0.1:8081"},
			wantTaken: "key,container",
			key:       emulatorKey, keySource: "the well-known emulator key, " + by,
			database: "shop", dbSrc: SourceFlag, container: "items", coSrc: by},
		{name: "an explicitly empty container flag is a choice too", flags: Flags{Container: ptr("")}, env: env{"COSMOSCTL_ENDPOINT": "http://127.0.0.1:8081", "COSMOSCTL_KEY": otherKey, "COSMOSCTL_DATABASE": "env-db"},
			wantTaken: "",
			key:       otherKey, keySource: "COSMOSCTL_KEY",
			database: "env-db", dbSrc: "env COSMOSCTL_DATABASE", container: "", coSrc: SourceFlag},
		{name: "Azure AD takes no key", flags: Flags{Auth: ptr("aad")}, env: env{"COSMOSCTL_ENDPOINT": "http://127.0.0.1:8081"},
			wantTaken: "database,container",
			key:       "", keySource: "",
			database: "app", dbSrc: by, container: "items", coSrc: by},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(writeConfig(t, ""), tc.flags, tc.env.lookup)
			if err != nil {
				t.Fatal(err)
			}
			before := s.Source("database")
			got, taken := s.WithAnnounced(announced)
			if strings.Join(taken, ",") != tc.wantTaken {
				t.Errorf("taken %q, want %q", strings.Join(taken, ","), tc.wantTaken)
			}
			if got.Key.Reveal() != tc.key || got.KeySource != tc.keySource {
				t.Errorf("key %s from %q, want %s from %q", got.Key, got.KeySource, Secret(tc.key), tc.keySource)
			}
			expect(t, got, "database", tc.database, got.Database, tc.dbSrc)
			expect(t, got, "container", tc.container, got.Container, tc.coSrc)
			if s.Source("database") != before {
				t.Error("WithAnnounced changed the sources of the settings it was given")
			}
		})
	}
}

func TestNothingAnnouncedChangesNothing(t *testing.T) {
	s, err := Resolve(writeConfig(t, ""), Flags{}, env{"COSMOSCTL_ENDPOINT": "https://acct.documents.azure.com:443/"}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	got, taken := s.WithAnnounced(Announced{By: "a real account"})
	if len(taken) != 0 || got.Key != "" || got.Database != "" || got.Container != "" || got.Source("key") != SourceDefault {
		t.Fatalf("an empty announcement took %q: %+v", taken, got)
	}
}
