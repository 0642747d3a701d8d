package faults

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

const exampleTOML = `
[[latency]]
region = "West US"
operation = "reads"
kind = "lognormal"
p50 = "5ms"
p99 = "40ms"

[[fault]]
region = "East US"
operations = ["read"]
probability = 0.05
effect = "delay"
delay = { kind = "uniform", min = "500ms", max = "2s" }
`

const exampleJSON = `{
  "latency": [
    {"region": "West US", "operation": "reads", "kind": "lognormal", "p50": "5ms", "p99": "40ms"}
  ],
  "fault": [
    {"region": "East US", "operations": ["read"], "probability": 0.05, "effect": "delay",
     "delay": {"kind": "uniform", "min": "500ms", "max": "2s"}}
  ]
}`

var exampleScenario = Scenario{
	Latency: []LatencySpec{{
		Region:       "West US",
		Operation:    "reads",
		Distribution: Distribution{Kind: KindLognormal, P50: Duration(5 * time.Millisecond), P99: Duration(40 * time.Millisecond)},
	}},
	Faults: []Rule{{
		Region:      "East US",
		Operations:  []string{"read"},
		Probability: 0.05,
		Effect:      EffectDelay,
		Delay:       Distribution{Kind: KindUniform, Min: Duration(500 * time.Millisecond), Max: Duration(2 * time.Second)},
	}},
}

func TestScenarioDecodesFromTOMLAndJSONAlike(t *testing.T) {
	decoders := []struct {
		name   string
		decode func(*Scenario) error
	}{
		{"toml", func(s *Scenario) error {
			md, err := toml.Decode(exampleTOML, s)
			if err == nil && len(md.Undecoded()) > 0 {
				t.Errorf("undecoded TOML keys: %v", md.Undecoded())
			}
			return err
		}},
		{"json", func(s *Scenario) error {
			dec := json.NewDecoder(strings.NewReader(exampleJSON))
			dec.DisallowUnknownFields()
			return dec.Decode(s)
		}},
	}
	for _, d := range decoders {
		t.Run(d.name, func(t *testing.T) {
			var got Scenario
			if err := d.decode(&got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, exampleScenario) {
				t.Fatalf("decoded\n%+v\nwant\n%+v", got, exampleScenario)
			}
			in, _ := newTestInjector(t)
			if err := in.LoadScenario(got); err != nil {
				t.Fatalf("decoded scenario does not load: %v", err)
			}
		})
	}
}

// The embedded Distribution must sit at the same level as region and
// operation; this pins down that BurntSushi/toml flattens it like
// encoding/json does.
func TestLatencySpecFlattensEmbeddedDistributionInTOML(t *testing.T) {
	var s struct {
		Latency []LatencySpec `toml:"latency"`
	}
	md, err := toml.Decode(`
[[latency]]
operation = "writes"
kind = "fixed"
value = "20ms"
`, &s)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Undecoded()) > 0 {
		t.Fatalf("undecoded keys: %v", md.Undecoded())
	}
	want := LatencySpec{Operation: "writes", Distribution: fixed(20 * time.Millisecond)}
	if len(s.Latency) != 1 || s.Latency[0] != want {
		t.Fatalf("got %+v, want %+v", s.Latency, want)
	}
}

func TestScenarioDecodingRejectsBadDurations(t *testing.T) {
	tests := []struct {
		name, toml, json, wantErr string
	}{
		{"negative", `[[fault]]
effect = "hang"
after = "-5ms"`, `{"fault":[{"effect":"hang","after":"-5ms"}]}`, "duration must not be negative: -5ms"},
		{"missing unit", `[[fault]]
effect = "hang"
for = "10"`, `{"fault":[{"effect":"hang","for":"10"}]}`, `invalid duration "10"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Scenario
			_, err := toml.Decode(tt.toml, &s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("toml: error %v, want it to contain %q", err, tt.wantErr)
			}
			err = json.Unmarshal([]byte(tt.json), &s)
			wantErrContaining(t, err, tt.wantErr)
		})
	}
}

func TestRuleJSONUsesSnakeCaseAndDurationStrings(t *testing.T) {
	r := Rule{ID: "f1", Region: "East US", Effect: EffectStatus, Status: 429, SubStatus: 3200,
		RetryAfter: Duration(250 * time.Millisecond), After: Duration(time.Minute), Fired: 3}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"f1","region":"East US","after":"1m0s","effect":"status","status":429,"substatus":3200,"retry_after":"250ms","fired":3}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Rule
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip: got %+v, want %+v", back, r)
	}
}

func TestScenarioRoundTripsThroughTOMLWithoutUnsetFields(t *testing.T) {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(exampleScenario); err != nil {
		t.Fatal(err)
	}
	for _, unset := range []string{"count", "after", "status", "value", "fired"} {
		if strings.Contains(buf.String(), unset) {
			t.Errorf("encoded TOML mentions unset field %q:\n%s", unset, buf.String())
		}
	}
	var back Scenario
	if _, err := toml.Decode(buf.String(), &back); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back, exampleScenario) {
		t.Fatalf("round trip:\n%s\ngot %+v", buf.String(), back)
	}
}

func TestLatencySpecStringShowsWhereItApplies(t *testing.T) {
	s := LatencySpec{Region: "West US", Operation: "reads", Distribution: fixed(20 * time.Millisecond)}
	if got, want := s.String(), `region "West US" reads fixed(20ms)`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
