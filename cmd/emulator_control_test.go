package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// fakeClockEmulator starts an emulator whose clock only moves when the test says so.
// The clock starts at the real time, so signed requests are within the date skew the
// emulator accepts.
func fakeClockEmulator(t *testing.T, cfg emulator.Config) (*emulator.Server, *clock.Fake, *emulator.ControlClient) {
	t.Helper()
	fake := clock.NewFake(time.Now())
	srv, err := emulator.Start(cfg, emulator.Options{Clock: fake})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctl, err := emulator.NewControlClient(srv.Endpoint(), srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	return srv, fake, ctl
}

// runControl runs a control subcommand against endpoint.
func runControl(endpoint string, args ...string) (code int, out, errOut string) {
	io, o, e := testIO()
	code = Run(context.Background(), io, append(args, "--endpoint", endpoint))
	return code, o.String(), e.String()
}

func TestFaultAddWindowCountsFromNow(t *testing.T) {
	srv, fake, ctl := fakeClockEmulator(t, emulator.Config{})
	fake.Advance(30 * time.Second) // the emulator has been up for 30 s
	added := fake.Now()
	// The help's own example: with the window counted from the emulator's start it
	// would have ended before it was added, and never fire.
	if code, out, errOut := runControl(srv.Endpoint(), "emulator", "fault", "add", "--region", "West US", "--effect", "refuse", "--for", "30s"); code != 0 || !strings.Contains(out, "added fault f1") {
		t.Fatalf("fault add --for 30s → %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runControl(srv.Endpoint(), "emulator", "fault", "add", "--region", "East US", "--effect", "hang", "--after", "10s", "--for", "30s"); code != 0 || !strings.Contains(out, "added fault f2") {
		t.Fatalf("fault add --after 10s --for 30s → %d %q %q", code, out, errOut)
	}
	rules, err := ctl.Faults(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if !r.Since.Equal(added) {
			t.Fatalf("rule %s counts from %v, want the time it was added (%v)", r.ID, r.Since, added)
		}
	}
	in := srv.Faults()
	for _, step := range []struct {
		at         time.Duration // since the rules were added
		refusing   bool
		eastUSHang bool
	}{
		{0, true, false},
		{10*time.Second - time.Millisecond, true, false},
		{10 * time.Second, true, true},
		{30*time.Second - time.Millisecond, true, true},
		{30 * time.Second, false, true},
		{40*time.Second - time.Millisecond, false, true},
		{40 * time.Second, false, false},
	} {
		fake.Advance(added.Add(step.at).Sub(fake.Now()))
		if got := in.Refusing("West US"); got != step.refusing {
			t.Errorf("at add+%v: West US refusing = %v, want %v", step.at, got, step.refusing)
		}
		if got := in.Decide("East US", faults.OpRead, "").Hang; got != step.eastUSHang {
			t.Errorf("at add+%v: East US hangs = %v, want %v", step.at, got, step.eastUSHang)
		}
	}
}

func TestScenarioFaultWindowCountsFromStart(t *testing.T) {
	window := faults.Rule{Region: "East US", Effect: faults.EffectHang, After: faults.Duration(10 * time.Second), For: faults.Duration(10 * time.Second)}
	srv, fake, ctl := fakeClockEmulator(t, emulator.Config{Faults: []faults.Rule{window}})
	start := fake.Now()
	fake.Advance(5 * time.Second)
	window.Region = "West US"
	if _, err := ctl.AddFault(t.Context(), window); err != nil { // the same window, added 5 s in
		t.Fatal(err)
	}
	in := srv.Faults()
	for _, step := range []struct {
		at             time.Duration // since the emulator started
		scenario, live bool
	}{
		{9 * time.Second, false, false},
		{10 * time.Second, true, false},
		{15 * time.Second, true, true},
		{20 * time.Second, false, true},
		{25 * time.Second, false, false},
	} {
		fake.Advance(start.Add(step.at).Sub(fake.Now()))
		if got := in.Decide("East US", faults.OpRead, "").Hang; got != step.scenario {
			t.Errorf("at start+%v: the scenario's rule fires = %v, want %v", step.at, got, step.scenario)
		}
		if got := in.Decide("West US", faults.OpRead, "").Hang; got != step.live {
			t.Errorf("at start+%v: the rule added at start+5s fires = %v, want %v", step.at, got, step.live)
		}
	}
}

func TestFaultListShowsTheWindowInTheEmulatorsClock(t *testing.T) {
	srv, fake, _ := fakeClockEmulator(t, emulator.Config{})
	fake.Advance(time.Minute)
	from := fake.Now().Add(10 * time.Second).Local()
	if code, _, errOut := runControl(srv.Endpoint(), "emulator", "fault", "add", "--effect", "hang", "--after", "10s", "--for", "30s"); code != 0 {
		t.Fatalf("fault add → %d %s", code, errOut)
	}
	code, out, _ := runControl(srv.Endpoint(), "emulator", "fault", "list")
	want := from.Format(time.TimeOnly) + "–" + from.Add(30*time.Second).Format(time.TimeOnly)
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("fault list → %d %q; want the window %s", code, out, want)
	}
}

func TestFaultAddFlags(t *testing.T) {
	srv, _, ctl := fakeClockEmulator(t, emulator.Config{})
	bad := []struct {
		name string
		args []string
		msg  string
	}{
		{"probability 0 is never, not always", []string{"--effect", "hang", "--probability", "0"}, "--probability"},
		{"negative probability", []string{"--effect", "hang", "--probability", "-0.5"}, "--probability"},
		{"probability above 1", []string{"--effect", "hang", "--probability", "1.5"}, "--probability"},
		{"delay effect without --delay", []string{"--effect", "delay"}, "--delay"},
		{"zero delay", []string{"--effect", "delay", "--delay", "0s"}, "--delay"},
		{"--delay with another effect", []string{"--effect", "status", "--status", "503", "--delay", "1s"}, "--effect delay"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runControl(srv.Endpoint(), append([]string{"emulator", "fault", "add"}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, tc.msg) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
				t.Fatalf("→ exit %d, stdout %q, stderr %q; want exit %d and one line mentioning %q", code, out, errOut, ExitUsage, tc.msg)
			}
		})
	}
	if rules, err := ctl.Faults(t.Context()); err != nil || len(rules) != 0 {
		t.Fatalf("refused flags added rules: %+v %v", rules, err)
	}
	good := []struct {
		name string
		args []string
		want faults.Rule
	}{
		{"probability not given: every request", []string{"--effect", "hang"}, faults.Rule{Effect: faults.EffectHang}},
		{"probability 1", []string{"--effect", "hang", "--probability", "1"}, faults.Rule{Effect: faults.EffectHang, Probability: 1}},
		{"probability 0.05", []string{"--effect", "hang", "--probability", "0.05"}, faults.Rule{Effect: faults.EffectHang, Probability: 0.05}},
		{"delay", []string{"--effect", "delay", "--delay", "250ms"}, faults.Rule{Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(250 * time.Millisecond)}}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			if err := ctl.ClearFaults(t.Context()); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runControl(srv.Endpoint(), append([]string{"emulator", "fault", "add", "-o", "json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("→ exit %d: %s", code, errOut)
			}
			var printed faults.Rule
			if err := json.Unmarshal([]byte(out), &printed); err != nil {
				t.Fatalf("printed %q: %v", out, err)
			}
			rules, err := ctl.Faults(t.Context())
			if err != nil || len(rules) != 1 {
				t.Fatalf("rules %+v, %v", rules, err)
			}
			got := rules[0]
			if got.Effect != tc.want.Effect || got.Probability != tc.want.Probability || got.Delay != tc.want.Delay || got.ID != printed.ID {
				t.Fatalf("the emulator holds %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestEmulatorLatencyPrintsATable(t *testing.T) {
	srv, _, _ := fakeClockEmulator(t, emulator.Config{Latency: []faults.LatencySpec{
		{Region: "East US", Operation: "all", Distribution: lognormal(2*time.Millisecond, 8*time.Millisecond)},
		{Region: "West US", Operation: "reads", Distribution: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(70 * time.Millisecond)}},
	}})
	code, out, errOut := runControl(srv.Endpoint(), "emulator", "latency")
	want := "" +
		"REGION   OPERATION  LATENCY\n" +
		"East US  all        lognormal(p50=2ms,p99=8ms)\n" +
		"West US  reads      fixed(70ms)\n"
	if code != 0 || out != want {
		t.Fatalf("emulator latency → %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, errOut = runControl(srv.Endpoint(), "emulator", "latency", "--op", "writes", "--min", "5ms", "--max", "10ms")
	want = "" +
		"REGION        OPERATION  LATENCY\n" +
		"East US       all        lognormal(p50=2ms,p99=8ms)\n" +
		"West US       reads      fixed(70ms)\n" +
		"(any region)  writes     uniform(5ms..10ms)\n"
	if code != 0 || out != want {
		t.Fatalf("emulator latency --min --max → %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, _ = runControl(srv.Endpoint(), "emulator", "latency", "-o", "json")
	var table []latencyJSON
	if err := json.Unmarshal([]byte(out), &table); code != 0 || err != nil || len(table) != 3 {
		t.Fatalf("emulator latency -o json → %d %q (%v)", code, out, err)
	}

	empty, _, _ := fakeClockEmulator(t, emulator.Config{})
	if code, out, _ := runControl(empty.Endpoint(), "emulator", "latency"); code != 0 || out != "no added latency\n" {
		t.Fatalf("emulator latency with none → %d %q", code, out)
	}
	if code, out, _ := runControl(empty.Endpoint(), "emulator", "latency", "-o", "json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("emulator latency -o json with none → %d %q", code, out)
	}
}

// printedLatency runs `cosmosctl emulator ARGS -o json` and returns the latency table it
// printed.
func printedLatency(t *testing.T, args ...string) []faults.LatencyEntry {
	t.Helper()
	out, _ := runEmulatorPrinted(t, append(args, "-o", "json")...)
	var printed struct {
		Latency *[]latencyJSON `json:"latency"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil || printed.Latency == nil {
		t.Fatalf("printed %q (%v): want a latency list", out, err)
	}
	return latencyEntriesOf(t, *printed.Latency)
}

func TestStandaloneEmulatorHasTheEmbeddedLatencies(t *testing.T) {
	got := printedLatency(t)
	if len(got) != len(embeddedLatencies) {
		t.Fatalf("latency %+v, want the embedded emulator's %+v", got, embeddedLatencies)
	}
	for i, l := range got {
		want := embeddedLatencies[i]
		if l.Region != want.Region || l.Operation != faults.GroupAll || l.Distribution != want.Distribution {
			t.Fatalf("latency %d is %+v, want %+v", i, l, want)
		}
	}

	// Custom regions get them by position: the first is the client's own region.
	got = printedLatency(t, "--regions", "West Europe,East Asia,Brazil South,Australia East")
	wantP50 := []time.Duration{2 * time.Millisecond, 62 * time.Millisecond, 75 * time.Millisecond, 75 * time.Millisecond}
	for i, l := range got {
		if time.Duration(l.Distribution.P50) != wantP50[i] {
			t.Fatalf("custom regions' latency %+v, want medians %v", got, wantP50)
		}
	}
	if len(got) != 4 || got[0].Region != "West Europe" {
		t.Fatalf("custom regions' latency %+v", got)
	}

	if got := printedLatency(t, "--latency", "none"); len(got) != 0 {
		t.Fatalf("--latency none → %+v, want no latency", got)
	}
}

func TestStandaloneLatencyAgainstAScenario(t *testing.T) {
	dir := t.TempDir()
	withLatency := filepath.Join(dir, "latency.toml")
	os.WriteFile(withLatency, []byte("[[latency]]\nregion = \"West US\"\nkind = \"fixed\"\nvalue = \"7ms\"\n"), 0o600)
	faultsOnly := filepath.Join(dir, "faults.toml")
	os.WriteFile(faultsOnly, []byte("[[fault]]\nregion = \"West US\"\nprobability = 0.01\neffect = \"hang\"\n"), 0o600)

	if got := printedLatency(t, "--scenario", withLatency); len(got) != 1 || got[0].Region != "West US" || got[0].Distribution.Kind != faults.KindFixed {
		t.Fatalf("a scenario's latency → %+v, want the scenario's only", got)
	}
	if got := printedLatency(t, "--scenario", withLatency, "--latency", "none"); len(got) != 0 {
		t.Fatalf("--latency none over a scenario's latency → %+v, want none", got)
	}
	if got := printedLatency(t, "--scenario", faultsOnly); len(got) != 3 || got[1].Distribution != embeddedLatencies[1].Distribution {
		t.Fatalf("a scenario without latency → %+v, want the realistic default", got)
	}
	io, _, errOut := testIO()
	if code := Run(context.Background(), io, []string{"emulator", "--port", "0", "--latency", "slow"}); code != ExitUsage || !strings.Contains(errOut.String(), "realistic") {
		t.Fatalf("--latency slow → %d %q", code, errOut.String())
	}
}

func TestStandaloneEmulatorIsSlowInTheFarRegions(t *testing.T) {
	// The default latencies are served, not only reported: a read in North Europe
	// takes its ≈75 ms, one in East US a few.
	out, _ := runEmulatorPrinted(t, "-o", "json")
	var printed struct {
		Regions []emulatorRegionJSON `json:"regions"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil {
		t.Fatal(err)
	}
	cred, _ := cosmos.NewMasterKey(cosmos.EmulatorKey)
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	took := func(endpoint string) time.Duration {
		best := time.Hour
		for range 3 {
			start := time.Now()
			if _, err := tr.Do(context.Background(), endpoint, &cosmos.Request{Method: "GET", Path: cosmos.ContainerPath("app", "items")}); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	if far := took(printed.Regions[2].Endpoint); far < 30*time.Millisecond {
		t.Fatalf("North Europe answered in %s: no realistic latency", far)
	}
}

func TestEmulatorLatencyFlagCompletes(t *testing.T) {
	isolateCache(t)
	got, _ := complete(t, "emulator", "--latency", "")
	if len(got) != 2 || !strings.HasPrefix(got[0], "realistic") || !strings.HasPrefix(got[1], "none") {
		t.Fatalf("emulator --latency completes to %q, want realistic and none", got)
	}
}
