package changefeed

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// fdoc is a change of the fake service: an item id, its effective partition key (two hex
// digits) and the LSN of its latest version (one sequence over every range, so that a
// split range's children accept their parent's etag, as on the service).
type fdoc struct {
	id  string
	epk string
	lsn int64
}

type frange struct{ id, min, max string }

// fakeBackend is an in-memory change feed: ranges holding the latest version of items
// by effective partition key.
type fakeBackend struct {
	mu     sync.Mutex
	docs   map[string]fdoc
	rs     []frange
	lsn    int64
	nextID int
	// splitOnPoll splits a range in two when it is next polled (which answers 410/1002).
	splitOnPoll map[string]bool
	// mergeOnPoll merges a range with its neighbour when it is next polled (which
	// answers 410/1002).
	mergeOnPoll map[string]bool
	// throttle answers this many polls with 429 and retryAfter.
	throttle   int
	retryAfter int // ms
	// failWith answers every poll with this error (nil: none).
	failWith error
	polls    []pollRequest
	// pollHook runs (without the lock) before each poll is answered.
	pollHook func(req pollRequest)
}

func newFake(nranges int) *fakeBackend {
	f := &fakeBackend{docs: map[string]fdoc{}, splitOnPoll: map[string]bool{}, mergeOnPoll: map[string]bool{}, nextID: nranges}
	for i := 0; i < nranges; i++ {
		min, max := fmt.Sprintf("%02X", i*256/nranges), fmt.Sprintf("%02X", (i+1)*256/nranges)
		if i == 0 {
			min = ""
		}
		if i == nranges-1 {
			max = "FF"
		}
		f.rs = append(f.rs, frange{strconv.Itoa(i), min, max})
	}
	return f
}

// write changes items id-from … id-(to-1); item i lives at effective key i*7 mod 255.
func (f *fakeBackend) write(from, to int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := from; i < to; i++ {
		f.lsn++
		id := fmt.Sprintf("id-%d", i)
		f.docs[id] = fdoc{id: id, epk: fmt.Sprintf("%02X", i*7%255), lsn: f.lsn}
	}
}

func (f *fakeBackend) endpoint() string { return "https://fake.documents.azure.com:443" }

func (f *fakeBackend) ranges(ctx context.Context, refresh bool) ([]cosmos.PartitionKeyRange, PageInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []cosmos.PartitionKeyRange
	for _, r := range f.rs {
		out = append(out, cosmos.PartitionKeyRange{ID: r.id, MinInclusive: r.min, MaxExclusive: r.max})
	}
	return out, PageInfo{Kind: KindRanges}, nil
}

func (f *fakeBackend) poll(ctx context.Context, req pollRequest) (poll, PageInfo, error) {
	if f.pollHook != nil {
		f.pollHook(req)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls = append(f.polls, req)
	info := PageInfo{Kind: KindPoll}
	if f.failWith != nil {
		return poll{}, info, f.failWith
	}
	if f.throttle > 0 {
		f.throttle--
		info.StatusCode = 429
		return poll{}, info, &cosmos.Error{StatusCode: 429, SubStatus: 3200, RetryAfter: time.Duration(f.retryAfter) * time.Millisecond}
	}
	var r *frange
	for i := range f.rs {
		if f.rs[i].id == req.rangeID {
			r = &f.rs[i]
		}
	}
	if req.pk == nil && r == nil {
		info.StatusCode = 410
		return poll{}, info, &cosmos.Error{StatusCode: 410, SubStatus: cosmos.SubPartitionKeyRangeGone}
	}
	if r != nil && f.splitOnPoll[r.id] {
		delete(f.splitOnPoll, r.id)
		f.splitLocked(r.id)
		info.StatusCode = 410
		return poll{}, info, &cosmos.Error{StatusCode: 410, SubStatus: cosmos.SubPartitionKeyRangeGone}
	}
	if r != nil && f.mergeOnPoll[r.id] {
		delete(f.mergeOnPoll, r.id)
		f.mergeLocked(r.id)
		info.StatusCode = 410
		return poll{}, info, &cosmos.Error{StatusCode: 410, SubStatus: cosmos.SubPartitionKeyRangeGone}
	}
	lo, hi := "", "FF"
	if r != nil {
		lo, hi = r.min, r.max
	}
	if req.endEPK != "" {
		if r == nil || req.startEPK < r.min || req.endEPK > r.max || req.startEPK >= req.endEPK {
			info.StatusCode = 400
			return poll{}, info, &cosmos.Error{StatusCode: 400, Message: fmt.Sprintf("EPK range [%s, %s) is not within range %s", req.startEPK, req.endEPK, req.rangeID)}
		}
		lo, hi = req.startEPK, req.endEPK
	}
	var after int64
	switch c := req.continuation; {
	case c == "*":
		after = f.lsn
	case c != "":
		n, err := strconv.ParseInt(strings.Trim(c, `"`), 10, 64)
		if err != nil {
			return poll{}, info, &cosmos.Error{StatusCode: 400, Message: "bad etag " + c}
		}
		after = n
	}
	var page []fdoc
	for _, d := range f.docs {
		if d.lsn > after && (r == nil || (d.epk >= lo && d.epk < hi)) {
			page = append(page, d)
		}
	}
	sort.Slice(page, func(i, j int) bool { return page[i].lsn < page[j].lsn })
	max := req.maxItems
	if max <= 0 {
		max = 100
	}
	if len(page) > max {
		page = page[:max]
	}
	if len(page) == 0 {
		info.StatusCode = 304
		return poll{etag: etag(max64(after, f.lsn)), notModified: true}, info, nil
	}
	info.StatusCode = 200
	items := make([]json.RawMessage, len(page))
	for i, d := range page {
		items[i] = json.RawMessage(fmt.Sprintf(`{"id":%q,"_lsn":%d}`, d.id, d.lsn))
	}
	return poll{items: items, etag: etag(page[len(page)-1].lsn)}, info, nil
}

func (f *fakeBackend) split(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.splitLocked(id)
}

func (f *fakeBackend) splitLocked(id string) {
	for i, r := range f.rs {
		if r.id != id {
			continue
		}
		lo, _ := strconv.ParseInt(orZero(r.min), 16, 64)
		hi, _ := strconv.ParseInt(r.max, 16, 64)
		mid := fmt.Sprintf("%02X", (lo+hi)/2)
		a := frange{strconv.Itoa(f.nextID), r.min, mid}
		b := frange{strconv.Itoa(f.nextID + 1), mid, r.max}
		f.nextID += 2
		f.rs = append(f.rs[:i], append([]frange{a, b}, f.rs[i+1:]...)...)
		return
	}
}

// splitAtLocked splits live range id at the effective partition key at.
func (f *fakeBackend) splitAtLocked(id, at string) {
	for i, r := range f.rs {
		if r.id != id {
			continue
		}
		a := frange{strconv.Itoa(f.nextID), r.min, at}
		b := frange{strconv.Itoa(f.nextID + 1), at, r.max}
		f.nextID += 2
		f.rs = append(f.rs[:i], append([]frange{a, b}, f.rs[i+1:]...)...)
		return
	}
}

// mergeLocked merges live range id with the range after it (before it, for the last).
func (f *fakeBackend) mergeLocked(id string) {
	i := -1
	for j, r := range f.rs {
		if r.id == id {
			i = j
		}
	}
	if i < 0 || len(f.rs) < 2 {
		return
	}
	if i == len(f.rs)-1 {
		i--
	}
	m := frange{strconv.Itoa(f.nextID), f.rs[i].min, f.rs[i+1].max}
	f.nextID++
	f.rs = append(f.rs[:i], append([]frange{m}, f.rs[i+2:]...)...)
}

func (f *fakeBackend) merge(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mergeLocked(id)
}

func (f *fakeBackend) pollCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.polls)
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func etag(lsn int64) string { return `"` + strconv.FormatInt(lsn, 10) + `"` }

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
