package workload

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestSplitDuration(t *testing.T) {
	cases := []struct {
		name             string
		duration, server time.Duration
		want             ServerTime
		ok               bool
	}{
		{"the network is what the server time leaves of the duration", 30 * time.Millisecond, 4 * time.Millisecond, ServerTime{Server: 4 * time.Millisecond, Network: 26 * time.Millisecond}, true},
		{"an answer without a server time is not split", 30 * time.Millisecond, 0, ServerTime{}, false},
		{"a server time longer than the duration leaves no network time, never a negative one", 3 * time.Millisecond, 4 * time.Millisecond, ServerTime{Server: 4 * time.Millisecond}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SplitDuration(tc.duration, tc.server)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("SplitDuration(%s, %s) = %+v, %v; want %+v, %v", tc.duration, tc.server, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSummaryServerAndNetworkPercentiles(t *testing.T) {
	t.Run("answers without a server time have none: null, never 0", func(t *testing.T) {
		st := fill(NewStats(), ramp(10)...)
		sum := st.Summary()
		if sum.HasServerTime() || sum.ServerP50Ms != nil || sum.ServerP99Ms != nil || sum.NetworkP50Ms != nil || sum.NetworkP99Ms != nil {
			t.Fatalf("server %v/%v network %v/%v, want none", sum.ServerP50Ms, sum.ServerP99Ms, sum.NetworkP50Ms, sum.NetworkP99Ms)
		}
		b, _ := json.Marshal(sum)
		for _, k := range []string{`"server_p50_ms":null`, `"server_p99_ms":null`, `"network_p50_ms":null`, `"network_p99_ms":null`} {
			if !strings.Contains(string(b), k) {
				t.Errorf("JSON lacks %s: %s", k, b)
			}
		}
	})
	t.Run("the percentiles are of the answers that carried a server time", func(t *testing.T) {
		st := NewStats()
		// 100 answers: the server took 1..100 µs ×10 (10µs..1ms), the network 20ms
		// more for each; and 100 more answers that carried no server time.
		for i := 1; i <= 100; i++ {
			server := time.Duration(i*10) * time.Microsecond
			d := server + 20*time.Millisecond + time.Duration(i)*time.Microsecond
			st.Record(d, 200, 0, 1, false)
			split, ok := SplitDuration(d, server)
			if !ok {
				t.Fatal("not split")
			}
			st.RecordServerTime(split)
			st.Record(time.Second, 200, 0, 1, false)
		}
		sum := st.Summary()
		for _, f := range []struct {
			name string
			got  *float64
			want float64
		}{
			{"server p50", sum.ServerP50Ms, 0.5}, {"server p99", sum.ServerP99Ms, 0.99},
			{"network p50", sum.NetworkP50Ms, 20.05}, {"network p99", sum.NetworkP99Ms, 20.099},
		} {
			if f.got == nil || !near(*f.got, f.want) {
				t.Errorf("%s = %v, want %vms", f.name, f.got, f.want)
			}
		}
		if !sum.HasServerTime() {
			t.Error("HasServerTime is false")
		}
	})
	t.Run("a merge and an interval keep the server times", func(t *testing.T) {
		r := NewRecorder()
		r.Record(5*time.Millisecond, 200, 0, 1, false)
		r.RecordServerTime(ServerTime{Server: time.Millisecond, Network: 4 * time.Millisecond})
		iv := r.CutInterval().Summary()
		merged := NewStats()
		merged.Merge(r.Total())
		for name, sum := range map[string]Summary{"interval": iv, "total": r.Total().Summary(), "merged": merged.Summary()} {
			if sum.ServerP99Ms == nil || *sum.ServerP99Ms != 1 || sum.NetworkP99Ms == nil || *sum.NetworkP99Ms != 4 {
				t.Errorf("%s: server p99 %v, network p99 %v; want 1ms and 4ms", name, sum.ServerP99Ms, sum.NetworkP99Ms)
			}
		}
		if next := r.CutInterval().Summary(); next.HasServerTime() {
			t.Error("the next interval has the last one's server times")
		}
	})
}
