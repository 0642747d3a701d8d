package output

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// realisticChanges are change feed items as a production container gives them: long
// ids and hierarchical keys.
func realisticChanges() []ChangeRow {
	items := []string{
		`{"id":"order-2026-12-01-7f3c9a1e-55b2-4c1d-9e2a-0c3b1f4d8e77","tenant":"contoso-logistics-emea","user":"u-1842","_ts":1764582067,"_lsn":1234567}`,
		`{"id":"o2","tenant":"fabrikam","user":"u-7","_ts":1764582068,"_lsn":1234568,"pad":"` + strings.Repeat("x", 3000) + `"}`,
	}
	var rows []ChangeRow
	for i, it := range items {
		rows = append(rows, NewChangeRow(json.RawMessage(it), []string{"12", "3"}[i], []string{"/tenant", "/user"}))
	}
	return rows
}

func changesFitted() fittedTable {
	return fittedTable{
		name: "changes_realistic",
		render: func(w io.Writer, st Styles) error {
			t := NewChangesTable(w, st)
			if err := t.Write(realisticChanges()); err != nil {
				return err
			}
			return t.Close()
		},
		header: "TIME",
		cols: []fittedColumn{
			{header: "TIME", key: true}, {header: "RANGE"}, {header: "ID", key: true},
			{header: "PARTITION KEY", short: "PK", name: "partition key"}, {header: "SIZE"}, {header: "LSN"},
		},
		full: []string{"order-2026-12-01-7f3c9a1e-55b2-4c1d-9e2a-0c3b1f4d8e77", "contoso-logistics-emea, u-1842", "1234567", "3.0 KiB"},
	}
}

func TestNewChangeRow(t *testing.T) {
	r := realisticChanges()[0]
	if r.ID != "order-2026-12-01-7f3c9a1e-55b2-4c1d-9e2a-0c3b1f4d8e77" || r.PartitionKey != "contoso-logistics-emea, u-1842" ||
		r.LSN != 1234567 || r.RangeID != "12" || !r.Time.Equal(time.Unix(1764582067, 0)) {
		t.Fatalf("%+v", r)
	}
	if got := NewChangeRow(json.RawMessage(`{"id":"a","n":{"k":1}}`), "0", []string{"/n/k", "/missing"}).PartitionKey; got != "1, —" {
		t.Fatalf("nested and missing key values: %q", got)
	}
}
