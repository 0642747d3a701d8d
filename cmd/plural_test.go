package cmd

import "testing"

// An import of one line with that line rejected says "1 of its 1 line was", never
// "1 lines".
func TestPartialErrorOfOneLineSaysLine(t *testing.T) {
	for _, tc := range []struct {
		e    PartialError
		want string
	}{
		{PartialError{Rejected: 1, Lines: 1, File: "r.ndjson"}, "the import completed, but 1 of its 1 line was rejected or failed: it is in r.ndjson"},
		{PartialError{Rejected: 3, Lines: 1234, File: "r.ndjson"}, "the import completed, but 3 of its 1,234 lines were rejected or failed: they are in r.ndjson"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
