package faults

// Scenario is the shape of a scenario file: [[latency]] tables and [[fault]]
// tables. JSON uses the same names so one document can move between the CLI
// and the control API unchanged.
type Scenario struct {
	Latency []LatencySpec `toml:"latency,omitempty" json:"latency,omitempty"`
	Faults  []Rule        `toml:"fault,omitempty" json:"fault,omitempty"`
}

// LoadScenario is Load for a decoded scenario file.
func (in *Injector) LoadScenario(s Scenario) error {
	return in.Load(s.Latency, s.Faults)
}
