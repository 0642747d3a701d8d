package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The change feed as a table for a person: one row a change, written as the changes
// arrive (cosmosctl changes on a terminal). A streamed table cannot measure its rows
// before it writes them, so its layout is fixed once, from the terminal's width and
// typical values, by the same rules as every table (Column priorities: the LSN and size
// give way first, then the range, then the partition key is cut; the time and the id
// stay), and each later value is cut to its column.

// ChangeRow is one change as the table shows it.
type ChangeRow struct {
	Time         time.Time // the item's _ts
	RangeID      string
	ID           string
	PartitionKey string
	Size         int // bytes of the item as delivered
	LSN          int64
}

// NewChangeRow reads a change feed item: its id, _ts, _lsn, and the values at the
// container's partition key paths (joined by ", " for a hierarchical key).
func NewChangeRow(item json.RawMessage, rangeID string, pkPaths []string) ChangeRow {
	r := ChangeRow{RangeID: rangeID, Size: len(item)}
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil {
		return r
	}
	_ = json.Unmarshal(m["id"], &r.ID)
	var ts, lsn json.Number
	if json.Unmarshal(m["_ts"], &ts) == nil {
		if n, err := ts.Int64(); err == nil {
			r.Time = time.Unix(n, 0)
		}
	}
	if json.Unmarshal(m["_lsn"], &lsn) == nil {
		r.LSN, _ = lsn.Int64()
	}
	var parts []string
	for _, p := range pkPaths {
		v, ok := valueAt(m, p)
		if !ok {
			parts = append(parts, "—")
			continue
		}
		parts = append(parts, compactValue(v))
	}
	r.PartitionKey = strings.Join(parts, ", ")
	return r
}

func valueAt(m map[string]json.RawMessage, path string) (json.RawMessage, bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	cur := m
	for i, s := range segs {
		v, ok := cur[s]
		if !ok {
			return nil, false
		}
		if i == len(segs)-1 {
			return v, true
		}
		if json.Unmarshal(v, &cur) != nil {
			return nil, false
		}
	}
	return nil, false
}

// compactValue is a JSON value on one line; a string without its quotes.
func compactValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// ChangesTable writes ChangeRows as they come, under one header.
type ChangesTable struct {
	w       io.Writer
	st      Styles
	cols    []Column
	f       *fitter
	l       layout
	started bool
}

// changeColumns are the table's columns, and the widths of typical values they are laid
// out for.
var changeColumns = []Column{
	{Header: "TIME", Key: true, Priority: 5},
	{Header: "RANGE", Priority: 3},
	{Header: "ID", Key: true, Min: 8, Priority: 4},
	{Header: "PARTITION KEY", Short: "PK", Name: "partition key", Min: 6, Priority: 2},
	{Header: "SIZE", Right: true, Priority: 1},
	{Header: "LSN", Right: true, Priority: 0},
}

var changeTypical = []string{"12-01 22:41:07", "12", strings.Repeat("x", 24), strings.Repeat("x", 16), "12.3 KiB", "12345678"}

// NewChangesTable lays the table out for st.Width (0: no limit, values in full).
func NewChangesTable(w io.Writer, st Styles) *ChangesTable {
	f := newFitter(changeColumns, [][]string{changeTypical}, 2)
	return &ChangesTable{w: w, st: st, cols: changeColumns, f: f, l: f.fit(st.Width)}
}

// Write writes rows, after the header the first time.
func (t *ChangesTable) Write(rows []ChangeRow) error {
	if t.st.TSV {
		return t.writeTSV(rows)
	}
	var b strings.Builder
	if !t.started {
		t.started = true
		if !t.st.NoHeaders {
			cells := make([]string, len(t.cols))
			for c := range t.cols {
				cells[c] = t.st.Bold(t.f.header(c))
			}
			t.line(&b, cells)
		}
	}
	for _, r := range rows {
		when := ""
		if !r.Time.IsZero() {
			when = r.Time.UTC().Format("01-02 15:04:05")
		}
		t.line(&b, []string{when, r.RangeID, r.ID, r.PartitionKey, humanBytes(r.Size), fmt.Sprint(r.LSN)})
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// writeTSV writes rows as tab-separated values, after the header line the first time
// (unless NoHeaders): the time in RFC 3339 (UTC), the size in bytes, every value whole.
func (t *ChangesTable) writeTSV(rows []ChangeRow) error {
	var b strings.Builder
	if !t.started {
		t.started = true
		if !t.st.NoHeaders {
			for c, col := range t.cols {
				if c > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(col.Header)
			}
			b.WriteByte('\n')
		}
	}
	for _, r := range rows {
		when := ""
		if !r.Time.IsZero() {
			when = r.Time.UTC().Format(time.RFC3339)
		}
		cells := []string{when, r.RangeID, r.ID, r.PartitionKey, fmt.Sprint(r.Size), fmt.Sprint(r.LSN)}
		for c, v := range cells {
			if c > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(TSVField(v))
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// Close writes the footnote naming the columns the terminal's width hid, if any.
func (t *ChangesTable) Close() error {
	if !t.started || t.st.TSV {
		return nil
	}
	var b strings.Builder
	if note := t.f.footnote(); note != "" {
		for _, line := range wrapLines(note, t.st.Width) {
			b.WriteString(t.st.Faint(line) + "\n")
		}
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

func (t *ChangesTable) line(b *strings.Builder, cells []string) {
	var parts []string
	for c, v := range cells {
		if t.l.hidden[c] {
			continue
		}
		w := t.l.width[c]
		if t.st.Width > 0 {
			v = t.st.cut(v, w, false)
		}
		pad := strings.Repeat(" ", max(0, w-displayWidth(v)))
		if t.cols[c].Right {
			v = pad + v
		} else {
			v += pad
		}
		parts = append(parts, v)
	}
	b.WriteString(strings.TrimRight(strings.Join(parts, strings.Repeat(" ", t.l.gap)), " "))
	b.WriteByte('\n')
}

// humanBytes is a size for a person: 812 B, 12.3 KiB, 1.5 MiB.
func humanBytes(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
