package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Query results as a table for a person. Items are JSON documents with no fixed shape:
// the columns are their top-level properties in the order first seen, the system
// properties last (an operator looks for id and status, not _etag), and a VALUE column
// for items that are not objects (SELECT VALUE). On a terminal (Styles.Width) a value is
// cut to maxQueryCell cells, and the table fits the width as every table does: columns
// are cut, then hidden, right to left (the first is never hidden), and the footnote names
// them. Piped, every value is written in full.

// maxQueryCell is the widest a value is shown on a terminal: wide enough for an id, a
// timestamp or a short object, narrow enough that several columns fit.
const maxQueryCell = 40

// minQueryCell is how far a column is cut before it is hidden.
const minQueryCell = 12

// systemProperties are the properties the service adds to every item.
var systemProperties = map[string]bool{"_rid": true, "_self": true, "_etag": true, "_attachments": true, "_ts": true}

// valueColumn holds the items that are not objects.
const valueColumn = "VALUE"

// WriteQueryItems writes items as a table.
func WriteQueryItems(w io.Writer, st Styles, items []json.RawMessage) error {
	if len(items) == 0 {
		return nil
	}
	type row struct {
		vals  map[string]json.RawMessage
		value json.RawMessage // an item that is not an object
	}
	rows := make([]row, len(items))
	var names, system []string
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
				names = append(names, k)
			}
		}
	}
	names = append(names, system...)
	first := 0 // the first property column
	if hasValue {
		names = append([]string{valueColumn}, names...)
		first = 1
	}
	cols := make([]Column, len(names))
	for i, n := range names {
		cols[i] = Column{Header: n, Name: n, Key: i == 0, Priority: len(names) - i, Min: minQueryCell}
	}
	dash := st.Faint(st.None())
	t := NewTableOf(w, st, cols...)
	for _, r := range rows {
		cells := make([]string, len(names))
		for j := range cells {
			cells[j] = dash
		}
		if r.vals == nil {
			cells[0] = queryCell(r.value, st)
		} else {
			for j := first; j < len(names); j++ {
				if v, ok := r.vals[names[j]]; ok {
					cells[j] = queryCell(v, st)
				}
			}
		}
		t.Append(cells...)
	}
	return t.Render()
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
// compact JSON; on a terminal cut to maxQueryCell.
func queryCell(v json.RawMessage, st Styles) string {
	text := func() string {
		v = bytes.TrimSpace(v)
		if len(v) > 0 && v[0] == '"' {
			var s string
			if json.Unmarshal(v, &s) == nil {
				if st.TSV {
					return s // the string as it is: TSVField escapes what a field cannot hold
				}
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
	}()
	if st.Width > 0 {
		text = st.cut(text, maxQueryCell, false)
	}
	return text
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
	// On a narrow terminal the note is cut, then the regions contacted and the winner
	// (the JSON has them), the attempts and hedges; what each request was and cost stays.
	t := NewTableOf(ew, st,
		Column{Header: "#", Key: true}, Column{Header: "REQUEST", Key: true}, Column{Header: "RANGE", Key: true},
		Column{Header: "REGIONS", Priority: 3, Min: 12}, Column{Header: "WINNER", Priority: 4, Min: 10},
		Column{Header: "ATTEMPTS", Short: "ATT", Right: true, Priority: 5}, Column{Header: "HEDGES", Short: "HDG", Right: true, Priority: 6},
		Column{Header: "STATUS", Key: true}, Column{Header: "RU", Key: true, Right: true}, Column{Header: "DURATION", Short: "TIME", Key: true, Right: true},
		Column{Header: "ITEMS", Key: true, Right: true}, Column{Header: "NOTE", Priority: 1, Min: 16})
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
	if totals.Merges > 0 {
		tail.add("merges", HumanCount(totals.Merges, "range")+" merged into a wider one: each went on there, narrowed to its own keys")
	}
	tail.add("duration", HumanDuration(time.Duration(totals.DurationMs*float64(time.Millisecond))))
	tail.write(ew)
	return ew.err
}
