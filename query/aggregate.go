package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// agg combines the partial results of one aggregate (or one grouped value) from every
// page of every range. It is plain data, so that a continuation token carries it.
//
// The rules are the service's, as the SDKs apply them: COUNT adds; SUM adds and turns
// undefined for good once a partial is undefined (a non-number was summed); AVG adds sums
// and counts and is undefined when any partial had values but no sum, or nothing was
// counted; MIN and MAX compare in the cross-type order, ignore partials that counted
// nothing, and turn undefined when a partial was an array or object; a grouped value
// (no aggregate) is the first one seen.
type agg struct {
	Kind  string          `json:"k,omitempty"` // Count, Sum, Min, Max, Average, "" (value)
	N     float64         `json:"n,omitempty"` // count, sum
	C     int64           `json:"c,omitempty"` // the count of an average
	Undef bool            `json:"u,omitempty"`
	Has   bool            `json:"h,omitempty"`
	V     json.RawMessage `json:"v,omitempty"` // MIN/MAX so far, or the grouped value
}

// aggregateItem unwraps a partial aggregate: {"item": v} or {"item2": v} (item2 wins),
// or, in a SELECT VALUE aggregate's page, the one-element array around it. A missing item
// is undefined (nil).
func aggregateItem(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil || len(arr) != 1 {
			return nil, fmt.Errorf("a partial aggregate is not [{\"item\": …}]: %.200s", raw)
		}
		raw = bytes.TrimSpace(arr[0])
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("a partial aggregate is not {\"item\": …}: %.200s", raw)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if v, ok := obj["item2"]; ok {
		return v, nil
	}
	return obj["item"], nil
}

// add folds in one partial: the aggregate item for an aggregate, the value itself for a
// grouped value (nil: undefined).
func (a *agg) add(raw json.RawMessage) error {
	if a.Kind == "" {
		if !a.Has && raw != nil {
			a.Has, a.V = true, append(json.RawMessage(nil), raw...)
		}
		return nil
	}
	var item json.RawMessage // no partial at all: undefined
	if raw != nil {
		var err error
		if item, err = aggregateItem(raw); err != nil {
			return err
		}
	}
	switch a.Kind {
	case "Count":
		v, err := parseValue(item)
		if err != nil {
			return err
		}
		if v.k == kindNumber {
			a.N += v.n
		}
	case "Sum":
		v, err := parseValue(item)
		if err != nil {
			return err
		}
		switch v.k {
		case kindNumber:
			a.N += v.n
		default:
			a.Undef = true
		}
	case "Average":
		var p struct {
			Sum   *float64 `json:"sum"`
			Count int64    `json:"count"`
		}
		if item == nil {
			return nil
		}
		if err := json.Unmarshal(item, &p); err != nil {
			return fmt.Errorf("a partial average is not {\"sum\": …, \"count\": …}: %.200s", item)
		}
		switch {
		case p.Sum != nil:
			a.N += *p.Sum
			a.C += p.Count
		case p.Count > 0:
			a.Undef = true // values that were not numbers
		}
	case "Min", "Max":
		return a.addMinMax(item)
	}
	return nil
}

func (a *agg) addMinMax(item json.RawMessage) error {
	if a.Undef {
		return nil
	}
	v, err := parseValue(item)
	if err != nil {
		return err
	}
	if v.k == kindObject {
		// {"min": v, "count": n}: the partial of a newer service, which says whether the
		// range counted anything.
		var p map[string]json.RawMessage
		if err := json.Unmarshal(item, &p); err == nil {
			if cnt, ok := p["count"]; ok {
				c, _ := strconv.ParseFloat(string(bytes.TrimSpace(cnt)), 64)
				if c == 0 {
					return nil
				}
				inner, ok := p["min"]
				if !ok {
					inner, ok = p["max"]
				}
				if !ok {
					a.Undef = true
					return nil
				}
				if v, err = parseValue(inner); err != nil {
					return err
				}
			}
		}
	}
	switch v.k {
	case kindUndefined:
		return nil // a range with nothing to compare
	case kindArray, kindObject:
		a.Undef = true
		return nil
	}
	if a.Has {
		cur, err := parseValue(a.V)
		if err != nil {
			return err
		}
		c := compareValues(v, cur)
		if (a.Kind == "Min" && c >= 0) || (a.Kind == "Max" && c <= 0) {
			return nil
		}
	}
	a.Has, a.V = true, append(json.RawMessage(nil), v.raw...)
	return nil
}

// result is the combined value, or nil when it is undefined.
func (a *agg) result() json.RawMessage {
	switch a.Kind {
	case "Count":
		return json.RawMessage(formatNumber(a.N))
	case "Sum":
		if a.Undef {
			return nil
		}
		return json.RawMessage(formatNumber(a.N))
	case "Average":
		if a.Undef || a.C <= 0 {
			return nil
		}
		return json.RawMessage(formatNumber(a.N / float64(a.C)))
	}
	if a.Undef || !a.Has {
		return nil
	}
	return a.V
}

// grouper runs aggregates and GROUP BY: every page's items fold into one group per
// distinct groupByItems (one group for aggregates without GROUP BY), and the groups are
// emitted once every range is drained.
type grouper struct {
	value   bool     // SELECT VALUE: one value per group
	valueOp string   // its aggregate ("" for a grouped value)
	aliases []string // SELECT list: the result's properties, in order
	types   map[string]string
	groups  map[string]*group
	// implicit: aggregates without GROUP BY have exactly one group, even over no items
	// (SELECT VALUE COUNT(1) of nothing is 0).
	implicit bool
}

type group struct {
	Key    string          `json:"k"` // canonical JSON of groupByItems ("" without GROUP BY)
	Value  *agg            `json:"v,omitempty"`
	Fields map[string]*agg `json:"f,omitempty"`
}

func newGrouper(qi *queryInfo) *grouper {
	g := &grouper{value: qi.HasSelectValue, groups: map[string]*group{}, types: map[string]string{}}
	if g.value && len(qi.Aggregates) > 0 {
		g.valueOp = qi.Aggregates[0]
	}
	g.aliases = qi.aliases()
	for alias, t := range qi.AliasTypes {
		if t != nil {
			g.types[alias] = *t
		}
	}
	g.implicit = len(qi.GroupByExpressions) == 0
	if g.implicit {
		g.groups[""] = g.newGroup("")
	}
	return g
}

func (g *grouper) newGroup(key string) *group {
	gr := &group{Key: key}
	if g.value {
		gr.Value = &agg{Kind: g.valueOp}
		return gr
	}
	gr.Fields = map[string]*agg{}
	for _, a := range g.aliases {
		gr.Fields[a] = &agg{Kind: g.types[a]}
	}
	return gr
}

// add folds in one item of a range's page: {"groupByItems": […], "payload": …}, or for
// aggregates without GROUP BY the payload alone (or wrapped without groupByItems).
func (g *grouper) add(item json.RawMessage) error {
	payload, key := item, ""
	if t := bytes.TrimSpace(item); len(t) > 0 && t[0] == '{' {
		var w struct {
			GroupByItems json.RawMessage `json:"groupByItems"`
			Payload      json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(t, &w); err != nil {
			return err
		}
		switch {
		case w.GroupByItems != nil:
			// A GROUP BY row: its payload is the group's values, and a row without one
			// is the undefined group's of SELECT VALUE (c.x AS payload left out), which
			// yields no result, not the row itself.
			payload = w.Payload
		case w.Payload != nil:
			payload = w.Payload
		}
		if w.GroupByItems != nil && !g.implicit {
			c, err := canonical(w.GroupByItems)
			if err != nil {
				return err
			}
			key = string(c)
		}
	}
	gr, ok := g.groups[key]
	if !ok {
		gr = g.newGroup(key)
		g.groups[key] = gr
	}
	if g.value {
		return gr.Value.add(payload)
	}
	var fields map[string]json.RawMessage // none: every property is undefined
	if payload != nil {
		if err := json.Unmarshal(payload, &fields); err != nil {
			return fmt.Errorf("a grouped item's payload is not an object: %.200s", payload)
		}
	}
	for _, a := range g.aliases {
		if err := gr.Fields[a].add(fields[a]); err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
	}
	return nil
}

// results are the groups' results, ordered by group key so that a run and its resumed
// run emit them in the same order. An undefined SELECT VALUE result is no result; an
// undefined property is left out of its object, as the service does.
func (g *grouper) results() []json.RawMessage {
	keys := make([]string, 0, len(g.groups))
	for k := range g.groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []json.RawMessage
	for _, k := range keys {
		gr := g.groups[k]
		if g.value {
			if v := gr.Value.result(); v != nil {
				out = append(out, v)
			}
			continue
		}
		var b bytes.Buffer
		b.WriteByte('{')
		n := 0
		for _, a := range g.aliases {
			v := gr.Fields[a].result()
			if v == nil {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(a)
			b.Write(name)
			b.WriteByte(':')
			b.Write(v)
			n++
		}
		b.WriteByte('}')
		out = append(out, b.Bytes())
	}
	return out
}

// state and restore carry the groups in a continuation token.
func (g *grouper) state() []*group {
	out := make([]*group, 0, len(g.groups))
	for _, gr := range g.groups {
		out = append(out, gr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (g *grouper) restore(groups []*group) error {
	g.groups = map[string]*group{}
	for _, gr := range groups {
		fresh := g.newGroup(gr.Key)
		if g.value {
			if gr.Value == nil || gr.Value.Kind != fresh.Value.Kind {
				return errTokenMismatch
			}
		} else {
			for a, f := range fresh.Fields {
				got := gr.Fields[a]
				if got == nil || got.Kind != f.Kind {
					return errTokenMismatch
				}
			}
		}
		g.groups[gr.Key] = gr
	}
	if g.implicit && g.groups[""] == nil {
		g.groups[""] = g.newGroup("")
	}
	return nil
}
