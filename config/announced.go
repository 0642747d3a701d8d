package config

import "maps"

// Announced is what an account endpoint offers for the settings that nothing
// configured: a cosmosctl emulator announces itself (emulator/hello.go) with whether it
// takes the public well-known key and which databases and containers it holds, and
// commands take them from it rather than ask for them. It is the last step of the
// precedence, before the built-in default: flag > environment > profile > announced >
// default.
type Announced struct {
	// By names the announcer for the sources: "the cosmosctl emulator at URL".
	By string
	// Key is the key to use when none is configured: the public well-known key of an
	// emulator that takes it, never a secret; "" for none.
	Key       Secret
	Database  string // "" for none
	Container string // "" for none
}

// SourceAnnounced is the source of a setting that an endpoint announced.
func SourceAnnounced(by string) string { return "announced by " + by }

// WithAnnounced returns s with the key, the database and the container that came from
// nowhere (their source is the default) taken from a, and the names of those taken, in
// that order. Anything a flag, the environment or a profile set wins; with Azure AD
// authentication no key is taken, as none is used.
func (s Settings) WithAnnounced(a Announced) (Settings, []string) {
	var taken []string
	s.Sources = maps.Clone(s.Sources)
	if s.Sources == nil {
		s.Sources = map[string]string{}
	}
	source := SourceAnnounced(a.By)
	if a.Key != "" && s.Key == "" && s.Auth != AuthAAD && s.Source("key") == SourceDefault {
		s.Key, s.KeySource, s.Sources["key"] = a.Key, "the well-known emulator key, "+source, source
		taken = append(taken, "key")
	}
	if a.Database != "" && s.Database == "" && s.Source("database") == SourceDefault {
		s.Database, s.Sources["database"] = a.Database, source
		taken = append(taken, "database")
	}
	if a.Container != "" && s.Container == "" && s.Source("container") == SourceDefault {
		s.Container, s.Sources["container"] = a.Container, source
		taken = append(taken, "container")
	}
	return s, taken
}
