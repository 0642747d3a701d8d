package cmd

import (
	"fmt"
	"strings"
)

// configShowJSON is `config show -o json`: every setting a command would use, with where
// it comes from, nested as in the config file ([hedging], [write_retries]). A setting
// that is not set anywhere has the value null and the source "default".
type configShowJSON struct {
	ConfigFile string `json:"config_file"`
	// Configured says an account endpoint is set; without one commands use the
	// embedded emulator.
	Configured bool               `json:"configured"`
	Settings   configSettingsJSON `json:"settings"`
}

type configSettingsJSON struct {
	Profile  settingText `json:"profile"`
	Endpoint settingText `json:"endpoint"`
	Auth     settingText `json:"auth"`
	// Key is masked: its first and last four characters.
	Key              settingText   `json:"key"`
	AADTokenFile     settingText   `json:"aad_token_file"`
	Database         settingText   `json:"database"`
	Container        settingText   `json:"container"`
	PreferredRegions settingList   `json:"preferred_regions"`
	ExcludeRegions   settingList   `json:"exclude_regions"`
	E2ETimeoutMs     settingNumber `json:"e2e_timeout_ms"`
	AttemptTimeoutMs settingNumber `json:"attempt_timeout_ms"`
	HealthMemory     settingBool   `json:"health_memory"`
	Output           settingText   `json:"output"`
	ConnectionMode   settingText   `json:"connection_mode"`
	Hedging          struct {
		Mode          settingText   `json:"mode"`
		ThresholdMs   settingNumber `json:"threshold_ms"`
		StepMs        settingNumber `json:"step_ms"`
		MaxRegions    settingNumber `json:"max_regions"`
		BudgetPercent settingNumber `json:"budget_percent"`
	} `json:"hedging"`
	WriteRetries struct {
		Policy settingText `json:"policy"`
	} `json:"write_retries"`
}

// settingText is a setting whose value is a string, null when it is not set.
type settingText struct {
	Value  *string `json:"value"`
	Source string  `json:"source"`
}

// settingList is a setting whose value is a list of strings.
type settingList struct {
	Value  []string `json:"value"`
	Source string   `json:"source"`
}

// settingNumber is a setting whose value is a number, null when it is not set.
type settingNumber struct {
	Value  *float64 `json:"value"`
	Source string   `json:"source"`
}

// settingBool is a setting whose value is true or false.
type settingBool struct {
	Value  bool   `json:"value"`
	Source string `json:"source"`
}

// configShowJSONOf lays the rows out as configShowJSON.
func configShowJSONOf(file string, configured bool, rows []shownSetting) configShowJSON {
	out := configShowJSON{ConfigFile: file, Configured: configured}
	s := &out.Settings
	text := map[string]*settingText{"profile": &s.Profile, "endpoint": &s.Endpoint, "auth": &s.Auth, "key": &s.Key,
		"aad_token_file": &s.AADTokenFile, "database": &s.Database, "container": &s.Container, "output": &s.Output,
		"connection_mode": &s.ConnectionMode, "hedging.mode": &s.Hedging.Mode, "write_retries.policy": &s.WriteRetries.Policy}
	list := map[string]*settingList{"preferred_regions": &s.PreferredRegions, "exclude_regions": &s.ExcludeRegions}
	number := map[string]*settingNumber{"e2e_timeout_ms": &s.E2ETimeoutMs, "attempt_timeout_ms": &s.AttemptTimeoutMs,
		"hedging.threshold_ms": &s.Hedging.ThresholdMs, "hedging.step_ms": &s.Hedging.StepMs,
		"hedging.max_regions": &s.Hedging.MaxRegions, "hedging.budget_percent": &s.Hedging.BudgetPercent}
	for _, r := range rows {
		switch {
		case text[r.jsonName] != nil:
			t := text[r.jsonName]
			t.Source = r.Source
			if v := strings.TrimSpace(fmt.Sprint(r.Value)); r.Value != nil && v != "" {
				t.Value = &v
			}
		case list[r.jsonName] != nil:
			l := list[r.jsonName]
			l.Source = r.Source
			l.Value, _ = r.Value.([]string)
			if l.Value == nil {
				l.Value = []string{}
			}
		case number[r.jsonName] != nil:
			n := number[r.jsonName]
			n.Source = r.Source
			switch v := r.Value.(type) {
			case float64:
				n.Value = &v
			case int:
				f := float64(v)
				n.Value = &f
			}
		case r.jsonName == "health_memory":
			s.HealthMemory.Source = r.Source
			s.HealthMemory.Value, _ = r.Value.(bool)
		default:
			panic("config show: no JSON field for " + r.jsonName)
		}
	}
	return out
}

// configListJSON is `config list -o json`.
type configListJSON struct {
	ConfigFile string `json:"config_file"`
	Exists     bool   `json:"exists"`
	// DefaultProfile is null when the file names none.
	DefaultProfile *string             `json:"default_profile"`
	Profiles       []configListProfile `json:"profiles"`
}

// configListProfile is one profile: what it sets of the account, null what it does not.
type configListProfile struct {
	Profile   string  `json:"profile"`
	Default   bool    `json:"default"`
	Endpoint  *string `json:"endpoint"`
	Database  *string `json:"database"`
	Container *string `json:"container"`
}

func configListJSONOf(file string, exists bool, defaultProfile string, profiles []listedProfile) configListJSON {
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	out := configListJSON{ConfigFile: file, Exists: exists, DefaultProfile: orNull(defaultProfile), Profiles: []configListProfile{}}
	for _, p := range profiles {
		out.Profiles = append(out.Profiles, configListProfile{Profile: p.Name, Default: p.Default,
			Endpoint: orNull(p.Endpoint), Database: orNull(p.Database), Container: orNull(p.Container)})
	}
	return out
}
