package query

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// fdoc is a document of the fake service: its _rid (creation order), effective partition
// key and body.
type fdoc struct {
	rid  string
	epk  string
	body map[string]any
	raw  json.RawMessage
}

func (d fdoc) get(path string) (any, bool) {
	v, ok := d.body[path]
	return v, ok
}

// frow is one result row a range produces for the per-range query: its position key in
// the range's stream (ORDER BY values, then _rid) and its JSON.
type frow struct {
	key []value
	rid string
	raw json.RawMessage
}

type fakeRange struct {
	id, min, max string
	parents      []string
}

// fakeBackend is an in-memory service: ranges holding documents by effective partition
// key, each answering the per-range query page by page. A continuation is the position
// key of the last row returned (or, for the drained forms, the _rid of the last document
// scanned), so that, as on the real service, a split range's children accept their
// parent's continuation. Pages hold a random number of rows up to the page size asked
// for, and are sometimes empty with a continuation.
type fakeBackend struct {
	mu       sync.Mutex
	rng      *rand.Rand
	docs     []fdoc
	rs       []fakeRange
	planJSON string
	// streaming forms: the rows of a range, ordered by sorts (nil: by _rid)
	rows  func(docs []fdoc) []frow
	sorts sorter
	// drained forms: the partial rows of a run of a range's documents
	partial func(docs []fdoc) []json.RawMessage

	pageCalls  int
	splitAfter map[int]string // after n page calls, split this range
	mergeAfter map[int]bool   // after n page calls, merge the range asked with a neighbour
	emptyPages float64
	failAfter  int // after n page calls, every page fails with 500 (0: never)
	hang       bool
	hung       chan struct{}
	gate       chan struct{} // pages wait until it is closed

	log    []pageRequest
	nextID int
	cache  map[string]*rangeData
}

func newFake(seed int64, nranges int, docs []fdoc) *fakeBackend {
	f := &fakeBackend{rng: rand.New(rand.NewSource(seed)), docs: docs, splitAfter: map[int]string{}, mergeAfter: map[int]bool{}, hung: make(chan struct{}, 64), nextID: nranges}
	bounds := []string{""}
	for i := 1; i < nranges; i++ {
		bounds = append(bounds, fmt.Sprintf("%02X", i*256/nranges))
	}
	bounds = append(bounds, "FF")
	for i := 0; i < nranges; i++ {
		f.rs = append(f.rs, fakeRange{id: fmt.Sprint(i), min: bounds[i], max: bounds[i+1]})
	}
	return f
}

func (f *fakeBackend) plan(ctx context.Context, spec cosmos.QuerySpec) (*queryPlan, PageInfo, error) {
	info := PageInfo{Kind: KindPlan, RequestCharge: 1}
	p, err := parsePlan([]byte(f.planJSON))
	return p, info, err
}

func (f *fakeBackend) ranges(ctx context.Context, refresh bool) ([]cosmos.PartitionKeyRange, PageInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []cosmos.PartitionKeyRange
	for _, r := range f.rs {
		out = append(out, cosmos.PartitionKeyRange{ID: r.id, MinInclusive: r.min, MaxExclusive: r.max, Parents: r.parents})
	}
	return out, PageInfo{Kind: KindRanges, RequestCharge: 1, Diagnostics: &engine.Diagnostics{Attempts: []engine.Attempt{{}}}}, nil
}

// split replaces a range by two children, at the middle of its documents' keys.
func (f *fakeBackend) splitLocked(id string) {
	for i, r := range f.rs {
		if r.id != id {
			continue
		}
		var keys []string
		for _, d := range f.docs {
			if d.epk >= r.min && (r.max == "FF" || d.epk < r.max) {
				keys = append(keys, d.epk)
			}
		}
		sort.Strings(keys)
		if len(keys) < 2 || keys[len(keys)/2] == r.min {
			return // too small to split
		}
		mid := keys[len(keys)/2]
		a := fakeRange{id: fmt.Sprint(f.nextID), min: r.min, max: mid, parents: []string{r.id}}
		b := fakeRange{id: fmt.Sprint(f.nextID + 1), min: mid, max: r.max, parents: []string{r.id}}
		f.nextID += 2
		f.rs = append(append(append([]fakeRange(nil), f.rs[:i]...), a, b), f.rs[i+1:]...)
		return
	}
}

// mergeLocked replaces two adjacent ranges by one holding both, as the service merges.
func (f *fakeBackend) mergeLocked(a, b string) {
	for i := 0; i+1 < len(f.rs); i++ {
		l, r := f.rs[i], f.rs[i+1]
		if l.id != a || r.id != b {
			continue
		}
		m := fakeRange{id: fmt.Sprint(f.nextID), min: l.min, max: r.max, parents: []string{l.id, r.id}}
		f.nextID++
		f.rs = append(append(append([]fakeRange(nil), f.rs[:i]...), m), f.rs[i+2:]...)
		return
	}
	panic(fmt.Sprintf("fake: ranges %s and %s are not adjacent live ranges", a, b))
}

// mergeNeighbourLocked merges live range id (or, when it is gone, the first range) with
// the range after it, or before it when it is the last.
func (f *fakeBackend) mergeNeighbourLocked(id string) {
	if len(f.rs) < 2 {
		return
	}
	i := 0
	for j, r := range f.rs {
		if r.id == id {
			i = j
		}
	}
	if i == len(f.rs)-1 {
		i--
	}
	f.mergeLocked(f.rs[i].id, f.rs[i+1].id)
}

type rangeData struct {
	docs []fdoc
	rows []frow
}

// less orders a range's rows: by the ORDER BY values, ties by _rid.
func (f *fakeBackend) less(a, b frow) int {
	if c := f.sorts.compare(a.key, b.key); c != 0 {
		return c
	}
	return strings.Compare(a.rid, b.rid)
}

type fakeCont struct {
	Key json.RawMessage `json:"k,omitempty"`
	RID string          `json:"r"`
}

func (f *fakeBackend) page(ctx context.Context, req pageRequest) (page, PageInfo, error) {
	f.mu.Lock()
	f.pageCalls++
	f.log = append(f.log, req)
	if id, ok := f.splitAfter[f.pageCalls]; ok {
		if id == "" {
			id = req.rangeID // the range this request goes to
		}
		f.splitLocked(id)
	}
	if f.mergeAfter[f.pageCalls] {
		f.mergeNeighbourLocked(req.rangeID)
	}
	info := PageInfo{Kind: KindPage, RangeID: req.rangeID, RequestCharge: 2.5}
	if f.failAfter > 0 && f.pageCalls > f.failAfter {
		f.mu.Unlock()
		return page{}, info, &cosmos.Error{StatusCode: 500, Message: "injected"}
	}
	if f.hang {
		f.mu.Unlock()
		f.hung <- struct{}{}
		<-ctx.Done()
		return page{}, info, ctx.Err()
	}
	if gate := f.gate; gate != nil {
		f.mu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
			return page{}, info, ctx.Err()
		}
		f.mu.Lock()
	}
	var rng *fakeRange
	for i := range f.rs {
		if f.rs[i].id == req.rangeID {
			rng = &f.rs[i]
		}
	}
	if rng == nil && req.pk == nil {
		f.mu.Unlock()
		return page{}, info, &cosmos.Error{StatusCode: 410, SubStatus: cosmos.SubPartitionKeyRangeGone, Message: "range gone"}
	}
	key := req.rangeID
	var lo, hi string
	if rng != nil {
		// A page narrowed to part of the range (x-ms-start-epk/x-ms-end-epk) reads that
		// part only; a narrowing outside the range is a client bug.
		lo, hi = rng.min, rng.max
		if req.endEPK != "" {
			if req.startEPK < rng.min || (rng.max != "FF" && req.endEPK > rng.max) || req.startEPK >= req.endEPK {
				f.mu.Unlock()
				return page{}, info, &cosmos.Error{StatusCode: 400, Message: fmt.Sprintf("EPK range [%s, %s) is not within range %s [%s, %s)", req.startEPK, req.endEPK, rng.id, rng.min, rng.max)}
			}
			lo, hi = req.startEPK, req.endEPK
		}
		key += "/" + lo + "/" + hi
	}
	cached, ok := f.cache[key]
	if !ok {
		var docs []fdoc
		for _, d := range f.docs {
			if req.pk != nil || (d.epk >= lo && (hi == "FF" || d.epk < hi)) {
				docs = append(docs, d)
			}
		}
		sort.Slice(docs, func(i, j int) bool { return docs[i].rid < docs[j].rid })
		cached = &rangeData{docs: docs}
		if f.partial == nil {
			cached.rows = f.rows(docs)
			sort.SliceStable(cached.rows, func(i, j int) bool { return f.less(cached.rows[i], cached.rows[j]) < 0 })
		}
		if f.cache == nil {
			f.cache = map[string]*rangeData{}
		}
		f.cache[key] = cached
	}
	docs := cached.docs
	size := req.maxItems
	if size <= 0 {
		size = 100
	}
	n := 1 + f.rng.Intn(size)
	empty := f.rng.Float64() < f.emptyPages
	f.mu.Unlock()

	var cont fakeCont
	if req.continuation != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.continuation)
		if err != nil || json.Unmarshal(b, &cont) != nil {
			return page{}, info, &cosmos.Error{StatusCode: 400, Message: "bad continuation " + req.continuation}
		}
	}
	encode := func(c fakeCont) string {
		b, _ := json.Marshal(c)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	if f.partial != nil {
		start := sort.Search(len(docs), func(i int) bool { return docs[i].rid > cont.RID })
		if empty && start < len(docs) {
			return page{items: []json.RawMessage{}, continuation: encode(fakeCont{RID: cont.RID})}, info, nil
		}
		end := min(start+n, len(docs))
		p := page{items: f.partial(docs[start:end])}
		if end < len(docs) {
			p.continuation = encode(fakeCont{RID: docs[end-1].rid})
		}
		info.Items = len(p.items)
		return p, info, nil
	}
	rows, less := cached.rows, f.less
	start := 0
	if cont.RID != "" || cont.Key != nil {
		after := frow{rid: cont.RID}
		if cont.Key != nil {
			after.key, _ = f.sorts.parseRow(cont.Key)
		}
		start = sort.Search(len(rows), func(i int) bool { return less(rows[i], after) > 0 })
	}
	if empty && start < len(rows) {
		c := cont
		return page{items: []json.RawMessage{}, continuation: encode(c)}, info, nil
	}
	end := min(start+n, len(rows))
	p := page{items: []json.RawMessage{}}
	for _, r := range rows[start:end] {
		p.items = append(p.items, r.raw)
	}
	if end < len(rows) {
		last := rows[end-1]
		c := fakeCont{RID: last.rid}
		if len(f.sorts.desc) > 0 {
			c.Key = rowJSON(last.key)
		}
		p.continuation = encode(c)
	}
	info.Items = len(p.items)
	return p, info, nil
}

// rowJSON renders ORDER BY values as orderByItems.
func rowJSON(vals []value) json.RawMessage {
	var parts []string
	for _, v := range vals {
		if v.k == kindUndefined {
			parts = append(parts, "{}")
		} else {
			parts = append(parts, `{"item":`+string(v.raw)+`}`)
		}
	}
	return json.RawMessage("[" + strings.Join(parts, ",") + "]")
}

func mustValue(x any, ok bool) value {
	if !ok {
		return undefinedValue
	}
	b, _ := json.Marshal(x)
	v, _ := parseValue(b)
	return v
}

func jsonOf(x any) json.RawMessage {
	b, err := json.Marshal(x)
	if err != nil {
		panic(err)
	}
	return b
}

var errNoFake = errors.New("no fake")

// drainAll runs a query to its end and returns its items and the iterator.
func drainAll(it *Iterator) ([]json.RawMessage, []PageInfo, error) {
	var out []json.RawMessage
	var infos []PageInfo
	ctx := context.Background()
	for {
		items, info, err := it.Next(ctx)
		out = append(out, items...)
		if info != nil {
			infos = append(infos, *info)
		}
		if err != nil {
			if err.Error() == "EOF" {
				return out, infos, nil
			}
			return out, infos, err
		}
	}
}

var _ = time.Second
