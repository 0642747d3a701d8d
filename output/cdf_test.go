package output

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

func series() []Series {
	var fast, slow []time.Duration
	for i := 1; i <= 1000; i++ {
		fast = append(fast, time.Duration(i)*10*time.Microsecond)
		slow = append(slow, time.Duration(i)*time.Millisecond)
	}
	return []Series{{Name: "fast", Latencies: fast}, {Name: "slow", Latencies: slow}}
}

func TestCDFChartPlacesEachSeriesAndLabelsTheAxes(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCDF(&b, series(), 40, 10, NewStyles(&b, false, true)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"p0", "p99.9", "* fast", "+ slow", "(latency, log scale)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("chart lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	// The fast series sits left of the slow one on every row.
	for _, l := range lines[:10] {
		if i, j := strings.IndexRune(l, '*'), strings.IndexRune(l, '+'); i >= 0 && j >= 0 && i > j {
			t.Fatalf("fast series right of slow: %q", l)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatal("no escapes without colour")
	}
}

func TestCDFSVGIsWellFormed(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCDFSVG(&b, series(), "brownout <test>"); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&b)
	polylines := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	if polylines != 2 {
		t.Fatalf("%d curves, want 2", polylines)
	}
}
