package progress

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tick advances the clock by one interval and waits until the reporter has drawn and
// armed its next tick, so the output is complete when the test reads it.
func tick(t *testing.T, clk *clock.Fake, interval time.Duration) {
	t.Helper()
	if !clk.WaitForTimerIn(interval, 5*time.Second) {
		t.Fatal("the reporter armed no tick")
	}
	clk.Advance(interval)
	if !clk.WaitForTimerIn(interval, 5*time.Second) {
		t.Fatal("the reporter did not draw and re-arm after its tick")
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimPrefix(s, "\033[K")
}

func TestTheBarShowsCountsRatesAndETA(t *testing.T) {
	clk := clock.NewFake(epoch)
	var out lockedBuffer
	r := New(&out, Bar, Options{Label: "import", Clock: clk, Interval: time.Second, Width: func() int { return 120 }})
	for i := 1; i <= 4; i++ {
		r.Update(Counts{Done: int64(1000 * i), Total: 10000, RU: float64(5000 * i)})
		tick(t, clk, time.Second)
	}
	got := lastLine(out.String())
	want := "import [============>                 ] 4,000/10,000 items · 1,000/s · 5,000 RU/s · ETA 6s"
	if got != want {
		t.Fatalf("bar:\n got %q\nwant %q", got, want)
	}
	r.Stop()
	if s := out.String(); !strings.HasSuffix(s, "\r\033[K") {
		t.Fatalf("Stop should clear the line; output ends %q", s[max(0, len(s)-20):])
	}
}

func TestTheRatesAreThoseOfTheLastSecondsNotSinceTheStart(t *testing.T) {
	clk := clock.NewFake(epoch)
	var out lockedBuffer
	r := New(&out, JSON, Options{Clock: clk, Interval: time.Second})
	done := int64(0)
	// Ten seconds at 1,000 items/s, then throttled to 100 items/s for ten seconds.
	for i := 0; i < 20; i++ {
		if i < 10 {
			done += 1000
		} else {
			done += 100
		}
		r.Update(Counts{Done: done, Total: 100000})
		tick(t, clk, time.Second)
	}
	e := r.Snapshot()
	if e.ItemsPerSecond != 100 {
		t.Fatalf("items/s = %v after ten slow seconds, want 100 (the rate now, not the %v average)", e.ItemsPerSecond, float64(done)/20)
	}
	if e.ETASeconds == nil || *e.ETASeconds != float64(100000-done)/100 {
		t.Fatalf("ETA = %v, want %v s at the rate now", e.ETASeconds, float64(100000-done)/100)
	}
	r.Stop()
}

func TestJSONEventsAreOneObjectPerLineWithUnitsInTheirNames(t *testing.T) {
	clk := clock.NewFake(epoch)
	var out lockedBuffer
	r := New(&out, JSON, Options{Clock: clk, Interval: time.Second})
	r.Update(Counts{Done: 10, Failed: 2, Skipped: 3, RU: 52.5})
	tick(t, clk, time.Second)
	r.Update(Counts{Done: 20, Failed: 2, Skipped: 3, RU: 102.5})
	r.Stop()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one event per tick and one at Stop, got %d lines:\n%s", len(lines), out.String())
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &last); err != nil {
		t.Fatalf("not JSON: %q: %v", lines[1], err)
	}
	for k, v := range map[string]any{"event": "progress", "done": 20.0, "failed": 2.0, "skipped": 3.0, "request_charge": 102.5, "elapsed_ms": 1000.0} {
		if last[k] != v {
			t.Errorf("%s = %v, want %v (event %s)", k, last[k], v, lines[1])
		}
	}
	if v, ok := last["total"]; !ok || v != nil {
		t.Errorf("an unknown total is null (docs/json: a figure that does not exist is null): %s", lines[1])
	}
	if v, ok := last["eta_ms"]; !ok || v != nil {
		t.Errorf("no ETA without a total: null, %s", lines[1])
	}
}

func TestANarrowTerminalKeepsTheCountsAndFailures(t *testing.T) {
	clk := clock.NewFake(epoch)
	var out lockedBuffer
	r := New(&out, Bar, Options{Label: "import", Clock: clk, Interval: time.Second, Width: func() int { return 40 }})
	r.Update(Counts{Done: 12345, Total: 50000, Failed: 3, RU: 61725})
	tick(t, clk, time.Second)
	got := lastLine(out.String())
	if len([]rune(got)) > 39 {
		t.Fatalf("line %q is %d columns, want at most 39", got, len([]rune(got)))
	}
	for _, want := range []string{"12,348/50,000 items", "3 failed"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lost %q", got, want)
		}
	}
	r.Stop()
}

func TestANilReporterDoesNothing(t *testing.T) {
	r := New(&bytes.Buffer{}, Off, Options{})
	if r != nil {
		t.Fatal("mode Off should give a nil reporter")
	}
	r.Update(Counts{Done: 1})
	r.Stop()
}

func TestNothingIsWrittenAfterStop(t *testing.T) {
	clk := clock.NewFake(epoch)
	var out lockedBuffer
	r := New(&out, Bar, Options{Clock: clk, Interval: time.Second})
	r.Update(Counts{Done: 1})
	tick(t, clk, time.Second)
	r.Stop()
	before := out.String()
	clk.Advance(10 * time.Second)
	r.Stop()
	if out.String() != before {
		t.Fatalf("output changed after Stop: %q", strings.TrimPrefix(out.String(), before))
	}
}

func TestThousandsAndETA(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{31 * time.Second: "31s", 252 * time.Second: "4m12s", 3720 * time.Second: "1h02m"} {
		if got := ETA(d); got != want {
			t.Errorf("ETA(%v) = %q, want %q", d, got, want)
		}
	}
}
