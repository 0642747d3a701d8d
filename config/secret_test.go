package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

func TestMaskShowsOnlyTheEndsOfALongSecret(t *testing.T) {
	cases := []struct{ in, want string }{
		{emulatorKey, "C2y6…Jw=="},
		{"short", "****"},
		{"exactly15chars!", "****"},
		{"", ""},
	}
	for _, tc := range cases {
		if got := Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSecretNeverPrintsItself(t *testing.T) {
	s := Settings{Key: Secret(emulatorKey), Endpoint: "https://x.documents.azure.com:443/"}
	data, _ := json.Marshal(s)
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s),
		fmt.Sprintf("%s", s.Key), fmt.Sprintf("%q", s.Key), fmt.Sprintf("%x", s.Key), s.Key.String(), string(data),
	} {
		if strings.Contains(out, emulatorKey) || strings.Contains(out, fmt.Sprintf("%x", emulatorKey)) {
			t.Fatalf("secret printed in %q", out)
		}
	}
	if s.Key.Reveal() != emulatorKey {
		t.Fatal("Reveal does not return the key")
	}
}

func TestParseConnectionString(t *testing.T) {
	cases := []struct {
		name, in           string
		endpoint, key, err string
	}{
		{"as the portal shows it", "AccountEndpoint=https://a.documents.azure.com:443/;AccountKey=" + emulatorKey + ";",
			"https://a.documents.azure.com:443/", emulatorKey, ""},
		{"without the trailing semicolon", "AccountEndpoint=https://a.documents.azure.com:443/;AccountKey=" + emulatorKey,
			"https://a.documents.azure.com:443/", emulatorKey, ""},
		{"keys in any case and order, with spaces", " accountkey = " + emulatorKey + " ; ACCOUNTENDPOINT=https://a.documents.azure.com:443/ ",
			"https://a.documents.azure.com:443/", emulatorKey, ""},
		{"padding stays in the key", "AccountEndpoint=https://a/;AccountKey=YWJjZA==;", "https://a/", "YWJjZA==", ""},
		{"other keys ignored", "AccountEndpoint=https://localhost:8081/;AccountKey=" + emulatorKey + ";DisableServerCertificateValidation=True;",
			"https://localhost:8081/", emulatorKey, ""},
		{"missing key", "AccountEndpoint=https://a/;", "", "", "has no AccountKey"},
		{"missing endpoint", "AccountKey=" + emulatorKey, "", "", "has no AccountEndpoint"},
		{"not a connection string", emulatorKey[:20], "", "", "not a connection string"},
		{"endpoint not a URL", "AccountEndpoint=myaccount;AccountKey=" + emulatorKey, "", "", "must be a URL"},
		{"key not base64", "AccountEndpoint=https://a/;AccountKey=not*base64", "", "", "not valid base64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep, key, err := ParseConnectionString(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "not*base64") || strings.Contains(err.Error(), emulatorKey[:20]) {
					t.Fatalf("error quotes the secret: %v", err)
				}
				return
			}
			if err != nil || ep != tc.endpoint || key != tc.key {
				t.Fatalf("got %q, %q, %v; want %q, %q", ep, key, err, tc.endpoint, tc.key)
			}
		})
	}
}
