package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Query results as a table for a person. Items are JSON documents with no fixed shape:
// the columns are their top-level properties in the order first seen, the system
// properties last (an operator looks for id and status, not _etag), and a VALUE column
// for items that are not objects (SELECT VALUE). On a terminal (width > 0) a value is
// cut to maxQueryCell cells and the table to the width, dropping the columns that do
// not fit, which a footnote names; piped, every value is written in full.

// maxQueryCell is the widest a value is shown on a terminal: wide enough for an id, a
// timestamp or a short object, narrow enough that several columns fit.
const maxQueryCell = 40

// minQueryCell is the narrowest a column cut to fit the terminal is still shown at.
const minQueryCell = 8

// systemProperties are the properties the service adds to every item.
var systemProperties = map[string]bool{"_rid": true, "_self": true, "_etag": true, "_attachments": true, "_ts": true}

// valueColumn holds the items that are not objects.
const valueColumn = "VALUE"

// WriteQueryItems writes items as a table; width 0 is no limit (piped output).
func WriteQueryItems(w io.Writer, st Styles, items []json.RawMessage, width int) error {
	if len(items) == 0 {
		return nil
	}
	type row struct {
		vals  map[string]json.RawMessage
		value json.RawMessage // an item that is not an object
	}
	rows := make([]row, len(items))
	var cols, system []string
	seen := map[string]bool{}
	hasValue := false
	for i, it := range items {
		keys, vals, ok := objectOf(it)
		if !ok {
			hasValue = true
			rows[i].value = it
			continue
		}
		rows[i].vals = vals
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			if systemProperties[k] {
				system = append(system, k)
			} else {
				cols = append(cols, k)
			}
		}
	}
	cols = append(cols, system...)
	first := 0 // the first property column
	if hasValue {
		cols = append([]string{valueColumn}, cols...)
		first = 1
	}
	sym := st.sym()
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = make([]string, len(cols))
		for j := range cols {
			cells[i][j] = sym.dash
		}
		if r.vals == nil {
			cells[i][0] = queryCell(r.value)
			continue
		}
		for j := first; j < len(cols); j++ {
			if v, ok := r.vals[cols[j]]; ok {
				cells[i][j] = queryCell(v)
			}
		}
	}
	shown, widths, hidden := fitColumns(cols, cells, width)
	t := NewTable(w, st, pick(cols, shown)...)
	for _, row := range cells {
		out := make([]string, len(shown))
		for k, j := range shown {
			out[k] = row[j]
			if width > 0 {
				out[k] = cutCell(row[j], widths[k], st)
			}
			if row[j] == sym.dash {
				out[k] = st.Faint(sym.dash)
			}
		}
		t.Append(out...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if len(hidden) > 0 {
		note := fmt.Sprintf("%s not shown to fit the terminal: %s (-o json shows everything)", HumanCount(len(hidden), "more column"), strings.Join(hidden, ", "))
		for _, line := range wrapWords(note, width) {
			if _, err := fmt.Fprintln(w, st.Faint(line)); err != nil {
				return err
			}
		}
	}
	return nil
}

func pick(cols []string, idx []int) []string {
	out := make([]string, len(idx))
	for k, j := range idx {
		out[k] = cols[j]
	}
	return out
}

// fitColumns chooses the columns that fit in width (all when width is 0), left to right
// at their natural width (capped at maxQueryCell), then one more cut to what is left if
// that is at least minQueryCell. It returns the shown columns, their widths, and the
// names of the others.
func fitColumns(cols []string, cells [][]string, width int) (shown, widths []int, hidden []string) {
	natural := make([]int, len(cols))
	for j, c := range cols {
		natural[j] = ansi.StringWidth(c)
		for _, row := range cells {
			natural[j] = max(natural[j], ansi.StringWidth(row[j]))
		}
		if width > 0 {
			natural[j] = min(natural[j], max(maxQueryCell, ansi.StringWidth(c)))
		}
	}
	used := 0
	for j := range cols {
		gap := 0
		if len(shown) > 0 {
			gap = len(columnGap)
		}
		switch left := width - used - gap; {
		case width == 0 || natural[j] <= left:
			shown, widths = append(shown, j), append(widths, natural[j])
			used += gap + natural[j]
			continue
		case len(shown) == 0:
			// Not even the first column fits: show what there is room for.
			shown, widths = append(shown, j), append(widths, max(left, 1))
			used = width
			continue
		case left >= minQueryCell && len(hidden) == 0:
			shown, widths = append(shown, j), append(widths, left)
			used = width
			continue
		}
		hidden = append(hidden, cols[j])
	}
	return shown, widths, hidden
}

// wrapWords breaks text into lines of at most width cells at its blanks (a word wider
// than width gets a line of its own).
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && ansi.StringWidth(line)+1+ansi.StringWidth(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

func cutCell(s string, width int, st Styles) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	tail := "…"
	if st.ASCII {
		tail = "..."
	}
	if width <= ansi.StringWidth(tail) {
		tail = ""
	}
	return ansi.Truncate(s, width, tail)
}

// objectOf reads a JSON object's keys in order and their raw values; ok is false for
// anything that is not an object.
func objectOf(raw json.RawMessage) (keys []string, vals map[string]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	vals = map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	return keys, vals, true
}

// queryCell renders a value on one line: a string as its text (quoted only when it is
// empty or holds control characters, which would break the line), anything else as
// compact JSON.
func queryCell(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return strconv.Quote(s)
			}
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}

// QueryHead is what the per-page diagnostics table of a query starts with.
type QueryHead struct {
	Query string
	// Scope says where the query ran: within a partition key, or across partitions.
	Scope   string
	Hedging string
	// E2ETimeout bounds each page (0: none).
	E2ETimeout time.Duration
}

// WriteQueryPages writes a query's requests for a person (stderr): one row per request
// (the plan, the reads of the partition key ranges, every page) and the totals.
func WriteQueryPages(w io.Writer, st Styles, head QueryHead, pages []QueryPage, totals QueryTotals) error {
	sym := st.sym()
	ew := &errWriter{w: w}
	h := &labelled{st: st}
	h.add("query", head.Query)
	h.add("runs", head.Scope)
	h.add("hedging", orDefault(head.Hedging, "off")+" (each page)")
	if head.E2ETimeout > 0 {
		h.add("end-to-end timeout", HumanDuration(head.E2ETimeout)+" (each page)")
	}
	h.write(ew)
	ew.printf("\n")
	t := NewTable(ew, st, "#", "REQUEST", "RANGE", "REGIONS", "WINNER", "ATTEMPTS", "HEDGES", "STATUS", "RU", "DURATION", "ITEMS", "NOTE")
	t.AlignRight(0, 5, 6, 8, 9, 10)
	for _, p := range pages {
		items := strconv.Itoa(p.Items)
		if p.Kind != "page" {
			items = sym.dash
		}
		regions := list(p.ContactedRegions, ", ")
		if len(p.ContactedRegions) == 0 {
			regions = sym.dash
		}
		status := status(p.StatusCode, p.SubStatus, sym)
		if p.StatusCode >= 400 || (p.StatusCode == 0 && p.Attempts > 0) {
			status = st.Bad(status)
		}
		t.Append(strconv.Itoa(p.N), p.Kind, orDefault(p.RangeID, sym.dash), regions, orDefault(p.WinningRegion, sym.dash),
			strconv.Itoa(p.Attempts), strconv.Itoa(p.Hedges), status, fmt.Sprintf("%.2f", p.RequestCharge),
			HumanDuration(time.Duration(p.DurationMs*float64(time.Millisecond))), items, p.Note)
	}
	if len(pages) == 0 {
		ew.printf("%s\n", st.Faint("no request was sent"))
	} else if err := t.Render(); err != nil {
		return err
	}
	ew.printf("\n")
	tail := &labelled{st: st}
	items := strconv.Itoa(totals.Items)
	if totals.FirstItemMs != nil && totals.Items > 0 {
		items += ", the first after " + HumanDuration(time.Duration(*totals.FirstItemMs*float64(time.Millisecond)))
	}
	tail.add("items", items)
	requests := strconv.Itoa(totals.Pages)
	if other := totals.Requests - totals.Pages; other > 0 {
		requests += fmt.Sprintf(", and %s (query plan, partition key ranges)", HumanCount(other, "other request"))
	}
	tail.add("pages", requests)
	tail.add("request charge", fmt.Sprintf("%.2f RU total", totals.RequestCharge))
	tail.add("contacted regions", list(totals.ContactedRegions, ", "))
	if totals.Splits > 0 {
		tail.add("splits", HumanCount(totals.Splits, "range")+" split: their children went on from where they were")
	}
	tail.add("duration", HumanDuration(time.Duration(totals.DurationMs*float64(time.Millisecond))))
	tail.write(ew)
	return ew.err
}
