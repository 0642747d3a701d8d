package output

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/workload"
)

// withServerTimes is s with its answers' server and network p50/p99.
func withServerTimes(s workload.Summary, serverP50, serverP99, networkP50, networkP99 float64) workload.Summary {
	s.ServerP50Ms, s.ServerP99Ms = workload.Ms(serverP50), workload.Ms(serverP99)
	s.NetworkP50Ms, s.NetworkP99Ms = workload.Ms(networkP50), workload.Ms(networkP99)
	return s
}

// probeServerRows are probeRows whose answers carried the service's time, but North
// Europe's, which got no answer.
func probeServerRows() []ProbeRegion {
	rows := probeRows()
	rows[0].Summary = withServerTimes(rows[0].Summary, 0.4, 1.2, 1.7, 7.1)
	rows[1].Summary = withServerTimes(rows[1].Summary, 0.5, 3.9, 61, 246)
	return rows
}

func TestProbeTableWithServerTimesGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteProbeTable(&buf, NewStyles(&buf, false, false), probeServerRows()); err != nil {
		t.Fatal(err)
	}
	golden(t, "probe_table_server", buf.Bytes())
	header := strings.Join(strings.Fields(strings.SplitN(buf.String(), "\n", 2)[0]), " ")
	if header != "REGION COUNT ERRORS P50 P90 P99 SRV P50 SRV P99 NET P99 P99.9 MAX RU" {
		t.Fatalf("header %q", header)
	}
}

func TestProbeTableShowsServerColumnsOnlyWhenSomeAnswerHadAServerTime(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteProbeTable(&buf, NewStyles(&buf, false, false), probeRows()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "SRV") || strings.Contains(buf.String(), "NET") {
		t.Fatalf("server columns without a server time:\n%s", buf.String())
	}
}

func TestServerTimeVerdicts(t *testing.T) {
	base := workload.Summary{Count: 100, P50Ms: workload.Ms(5), P99Ms: workload.Ms(300)}
	cases := []struct {
		name string
		sum  workload.Summary
		want []string
	}{
		{"no server time: no verdict", base, nil},
		{"a fast server and a fast path: none", withServerTimes(base, 0.4, 2, 1, 8), nil},
		{"a network far above the server's time, but within the floor: none (a busy machine's loopback)", withServerTimes(base, 0.2, 0.5, 3, 95), nil},
		{"a network p99 above the floor and more than twice the server's: the path", withServerTimes(base, 0.4, 2, 200, 212),
			[]string{"the path to West US is slow (network p99 212ms vs server p99 2ms)"}},
		{"a slow server with a network in proportion: the region itself", withServerTimes(base, 80, 180, 30, 150),
			[]string{"West US itself is slow (server p99 180ms)"}},
		{"both", withServerTimes(base, 80, 180, 300, 400),
			[]string{"West US itself is slow (server p99 180ms)", "the path to West US is slow (network p99 400ms vs server p99 180ms)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ServerTimeVerdicts("West US", tc.sum); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
