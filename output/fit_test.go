package output

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// fitTable renders a table of every kind of column at a width.
func fitTable(t *testing.T, st Styles) string {
	t.Helper()
	var buf bytes.Buffer
	tb := NewTableOf(&buf, st,
		Column{Header: "REGION", Key: true, Priority: 9, Min: 8},
		Column{Header: "STATUS", Key: true},
		Column{Header: "ENDPOINT", Priority: 1, Abbrev: EndpointHost},
		Column{Header: "NOTE", Priority: 2, Min: 10},
		Column{Header: "LATENCY", Priority: 3, Right: true},
		Column{Header: "BAR", Priority: 4, Min: 4, Fill: func(row, width int) string { return strings.Repeat("=", width) }},
	)
	tb.Append("Southeast Asia", st.Good("200"), "https://acct-southeastasia.documents.azure.com:443/", "effective #1; write region", "12ms", strings.Repeat("=", 20))
	tb.Append("East US", st.Bad("503"), "https://acct-eastus.documents.azure.com:443/", "-", "1.20s", strings.Repeat("=", 20))
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTableFitsTheWidth(t *testing.T) {
	full := "" +
		"REGION           STATUS   ENDPOINT                                              NOTE                         LATENCY   BAR\n" +
		"Southeast Asia   200      https://acct-southeastasia.documents.azure.com:443/   effective #1; write region      12ms   ====================\n" +
		"East US          503      https://acct-eastus.documents.azure.com:443/          -                              1.20s   ====================\n"
	for _, tc := range []struct {
		name  string
		width int
		want  string
	}{
		{"piped: every column, every value in full", 0, full},
		{"a terminal wide enough: the same", 200, full},
		{"the gaps close to two blanks before anything else gives way", 136, "" +
			"REGION          STATUS  ENDPOINT                                             NOTE                        LATENCY  BAR\n" +
			"Southeast Asia  200     https://acct-southeastasia.documents.azure.com:443/  effective #1; write region     12ms  ====================\n" +
			"East US         503     https://acct-eastus.documents.azure.com:443/         -                             1.20s  ====================\n"},
		{"then a fill column shrinks, before any other gives way", 125, "" +
			"REGION          STATUS  ENDPOINT                                             NOTE                        LATENCY  BAR\n" +
			"Southeast Asia  200     https://acct-southeastasia.documents.azure.com:443/  effective #1; write region     12ms  ===========\n" +
			"East US         503     https://acct-eastus.documents.azure.com:443/         -                             1.20s  ===========\n"},
		{"then the lowest priority abbreviates, and the fill column takes back what is left", 110, "" +
			"REGION          STATUS  ENDPOINT                                NOTE                        LATENCY  BAR\n" +
			"Southeast Asia  200     acct-southeastasia.documents.azure.com  effective #1; write region     12ms  =========\n" +
			"East US         503     acct-eastus.documents.azure.com         -                             1.20s  =========\n"},
		{"then it is hidden, and the footnote names it", 90, "" +
			"REGION          STATUS  NOTE                        LATENCY  BAR\n" +
			"Southeast Asia  200     effective #1; write region     12ms  ====================\n" +
			"East US         503     -                             1.20s  ====================\n" +
			"(1 column hidden: endpoint; a wider terminal or a pipe shows it)\n"},
		{"a column with a Min is cut with an ellipsis at its turn", 60, "" +
			"REGION          STATUS  NOTE                   LATENCY  BAR\n" +
			"Southeast Asia  200     effective #1; writ...     12ms  ====\n" +
			"East US         503     -                        1.20s  ====\n" +
			"(1 column hidden: endpoint; a wider terminal or a pipe shows\n" +
			"it)\n"},
		{"key columns stay, cut no further than their Min, however narrow", 20, "" +
			"REGION        STATUS\n" +
			"Southeast...  200\n" +
			"East US       503\n" +
			"(4 columns hidden:\n" +
			"endpoint, note,\n" +
			"latency, bar; a\n" +
			"wider terminal or a\n" +
			"pipe shows them)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitTable(t, Styles{ASCII: true, Width: tc.width})
			if got != tc.want {
				t.Errorf("at width %d got\n%s\nwant\n%s", tc.width, got, tc.want)
			}
			assertFits(t, got, tc.width)
		})
	}
}

func TestTableFitColourKeepsLayout(t *testing.T) {
	for _, width := range []int{0, 118, 90, 60, 40} {
		var buf bytes.Buffer
		plain := fitTable(t, NewStyles(&buf, false, false).withWidth(width))
		coloured := fitTable(t, NewStyles(&buf, true, false).withWidth(width))
		if !strings.Contains(coloured, "\x1b[") {
			t.Fatalf("width %d: colour on, but no escapes in\n%s", width, coloured)
		}
		if got := stripANSI(coloured); got != plain {
			t.Errorf("width %d: coloured layout differs from plain once escapes are removed:\n%s\nvs\n%s", width, got, plain)
		}
	}
}

func (s Styles) withWidth(w int) Styles {
	s.Width = w
	return s
}

func TestTableEqualPrioritiesGiveWayRightToLeft(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, Styles{Width: 20}, "NAME", "FIRST", "SECOND", "THIRD")
	tb.Append("a", "1", "2", "3")
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	want := "NAME  FIRST  SECOND\n" + "a     1      2\n" + "(1 column hidden:\nthird; a wider\nterminal or a pipe\nshows it)\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if !tb.Hidden(3) || tb.Hidden(2) {
		t.Errorf("Hidden(3) %v, Hidden(2) %v: want the rightmost hidden only", tb.Hidden(3), tb.Hidden(2))
	}
}

func TestStreamWidth(t *testing.T) {
	env := func(columns string) func(string) string {
		return func(k string) string {
			if k == "COLUMNS" {
				return columns
			}
			return ""
		}
	}
	size := func(w int, err error) func() (int, error) { return func() (int, error) { return w, err } }
	for _, tc := range []struct {
		name    string
		tty     bool
		columns string
		size    func() (int, error)
		want    int
	}{
		{"a pipe has no limit", false, "", size(120, nil), 0},
		{"a pipe has no limit, whatever COLUMNS says", false, "80", size(0, errors.New("not a terminal")), 0},
		{"a terminal: its own width", true, "", size(132, nil), 132},
		{"COLUMNS overrides the terminal's width", true, "200", size(132, nil), 200},
		{"COLUMNS that is not a positive number is ignored", true, "wide", size(132, nil), 132},
		{"COLUMNS=0 is ignored", true, "0", size(132, nil), 132},
		{"a terminal that does not say: 80", true, "", size(0, errors.New("inappropriate ioctl")), 80},
		{"a terminal that says 0: 80", true, "", size(0, nil), 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StreamWidth(tc.tty, env(tc.columns), tc.size); got != tc.want {
				t.Errorf("StreamWidth = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestWrapLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		width int
		want  []string
	}{
		{"no limit", "a b c", 0, []string{"a b c"}},
		{"fits", "a b c", 5, []string{"a b c"}},
		{"breaks at blanks", "one two three four", 9, []string{"one two", "three", "four"}},
		{"keeps hyphenated words whole", `key ["warehouse-singapore-02"]`, 26, []string{"key", `["warehouse-singapore-02"]`}},
		{"breaks a word only when it alone is too wide", "a abcdefghij b", 4, []string{"a", "abcd", "efgh", "ij b"}},
		{"measures display width, not bytes", "→ → → →", 3, []string{"→ →", "→ →"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := wrapLines(tc.text, tc.width)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("wrapLines(%q, %d) = %q, want %q", tc.text, tc.width, got, tc.want)
			}
		})
	}
	got := wrapHanging("East US read: used last; one probe request in flight", 20, 2)
	want := []string{"East US read: used", "  last; one probe", "  request in flight"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrapHanging = %q, want %q", got, want)
	}
}

func TestEndpointHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://acct-westus.documents.azure.com:443/": "acct-westus.documents.azure.com",
		"https://acct-westus.documents.azure.com/":     "acct-westus.documents.azure.com",
		"http://127.0.0.1:8082/":                       "127.0.0.1:8082",
		"http://localhost:80":                          "localhost",
		"not a url":                                    "not a url",
	} {
		if got := EndpointHost(in); got != want {
			t.Errorf("EndpointHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReplicaID(t *testing.T) {
	for in, want := range map[string]string{
		"rntbd://cdb-ms-prod-westus1-be12.documents.azure.com:14070/apps/a/services/b/partitions/c/replicas/132845551374128612p/": "132845551374128612p",
		"http://127.0.0.1:8082/apps/cosmosctl/services/AbCdAA==/partitions/2/replicas/9p":                                         "9p",
		"no-slashes": "no-slashes",
	} {
		if got := replicaID(in); got != want {
			t.Errorf("replicaID(%q) = %q, want %q", in, got, want)
		}
	}
}

// assertFits fails the test if a line of out, stripped of escapes, is wider than width
// (0: no limit).
func assertFits(t *testing.T, out string, width int) {
	t.Helper()
	if width <= 0 {
		return
	}
	for line := range strings.Lines(out) {
		line = strings.TrimSuffix(line, "\n")
		if w := displayWidth(stripANSI(line)); w > width {
			t.Errorf("a line of %d cells at width %d: %q", w, width, line)
		}
	}
}
