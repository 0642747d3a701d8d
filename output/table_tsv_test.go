package output

import (
	"bytes"
	"testing"
)

func TestTSVWritesTheTableTabSeparatedForAScript(t *testing.T) {
	cases := []struct {
		name string
		st   Styles
		rows [][]string
		want string
	}{
		{"a header and rows, every value whole", Styles{TSV: true, Width: 20},
			[][]string{{"East US", "write", "a long note that a terminal would cut"}},
			"REGION\tROLE\tNOTE\nEast US\twrite\ta long note that a terminal would cut\n"},
		{"no header with NoHeaders", Styles{TSV: true, NoHeaders: true},
			[][]string{{"East US", "write", ""}, {"West US", "read", "x"}},
			"East US\twrite\t\nWest US\tread\tx\n"},
		{"tabs, newlines and backslashes escaped, colour left out", Styles{TSV: true},
			[][]string{{"a\tb", "c\nd", "e\\f \x1b[31mred\x1b[0m"}},
			"REGION\tROLE\tNOTE\na\\tb\tc\\nd\te\\\\f red\n"},
		{"a short row padded with empty fields", Styles{TSV: true}, [][]string{{"East US"}}, "REGION\tROLE\tNOTE\nEast US\t\t\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tbl := NewTableOf(&b, tc.st, Column{Header: "REGION", Key: true}, Column{Header: "ROLE", Priority: 1}, Column{Header: "NOTE", Priority: 2, Min: 4})
			for _, r := range tc.rows {
				tbl.Append(r...)
			}
			if err := tbl.Render(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Fatalf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}

func TestADrawnTableWithoutItsHeader(t *testing.T) {
	var b bytes.Buffer
	tbl := NewTable(&b, Styles{NoHeaders: true}, "REGION", "ROLE")
	tbl.Append("East US", "write")
	if err := tbl.Render(); err != nil {
		t.Fatal(err)
	}
	if b.String() != "East US   write\n" {
		t.Fatalf("got %q", b.String())
	}
}

func TestNoValueIsADashInATableAndEmptyInTSV(t *testing.T) {
	if (Styles{}).None() != "—" || (Styles{ASCII: true}).None() != "-" || (Styles{TSV: true}).None() != "" {
		t.Fatalf("None: %q %q %q", (Styles{}).None(), (Styles{ASCII: true}).None(), (Styles{TSV: true}).None())
	}
}
