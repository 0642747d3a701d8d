package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/docfeed"
	"github.com/google/uuid"
)

// The floor: what the work costs on the wire, hand-made REST requests signed with the
// master key (the cosmos package signs them and names the headers, nothing more), the
// same concurrency as the others, no engine, no retries, no hedging, no diagnostics,
// bodies read to io.Discard (the counts come from x-ms-item-count). Any error ends the
// run. A new HTTP client (connection pool) each run, as a command's process has.
//
// floor-lines, the read workloads' second floor, is the least a tool that prints the
// items must add to that: each page's body read into memory, its Documents array split
// into items (internal/docfeed, the one pass that finds where each item ends, which
// needs to follow strings and nesting as much as checking them does), and the items
// written as lines, one write a page, counted as lines, each reader reusing its body and
// page buffers from page to page. No compaction (the service sends items compact), no
// checkpoint, no ordering.

// floorClient is one run's connections and signing.
type floorClient struct {
	s    *suite
	http *http.Client
}

func (s *suite) newFloorClient() *floorClient {
	return &floorClient{s: s, http: cosmos.NewHTTPClient()}
}

func (f *floorClient) close() { f.http.CloseIdleConnections() }

// do signs and sends one request; it returns the response with its body unread (the
// caller drains and closes it), or an error for a status other than the ones allowed.
func (f *floorClient) do(ctx context.Context, method, path string, h http.Header, body []byte, ok ...int) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.s.endpoint+path, rd)
	if err != nil {
		return nil, err
	}
	if h != nil {
		req.Header = h
	}
	date := cosmos.FormatDate(time.Now())
	resType, resLink := cosmos.ResourceFromPath(path)
	auth, _ := f.s.key.Authorize(method, resType, resLink, date)
	req.Header.Set(cosmos.HeaderAuthorization, auth)
	req.Header.Set(cosmos.HeaderDate, date)
	req.Header.Set(cosmos.HeaderVersion, cosmos.APIVersion)
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, err
	}
	for _, code := range ok {
		if resp.StatusCode == code {
			return resp, nil
		}
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, msg)
}

// discard reads a response's body to the end and closes it, so that its connection is
// reused.
func discard(resp *http.Response) {
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// ranges lists a container's partition key range ids.
func (s *suite) ranges(ctx context.Context, container string, hc *http.Client) ([]string, error) {
	f := &floorClient{s: s, http: hc}
	resp, err := f.do(ctx, http.MethodGet, "/dbs/"+database+"/colls/"+container+"/pkranges", http.Header{}, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		PartitionKeyRanges []cosmos.PartitionKeyRange
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	ids := make([]string, len(body.PartitionKeyRanges))
	for i, r := range body.PartitionKeyRanges {
		ids[i] = r.ID
	}
	return ids, nil
}

// floorImport writes every line of the import input with importConcurrency POSTs in
// flight, each with the partition key read from its line (the least a client must
// parse) and Prefer: return=minimal, as the SDK sends: 201 counts. A create writes the
// document cosmosctl's create writes: the line with a _trackingId of the same length
// spliced in before its closing brace (a run id, a colon, the line's number), so that
// the service stores and indexes the same bytes for both; an upsert writes the line.
func (s *suite) floorImport(upsert bool) func(context.Context, string) (int, error) {
	return func(ctx context.Context, container string) (int, error) {
		f := s.newFloorClient()
		defer f.close()
		path := "/dbs/" + database + "/colls/" + container + "/docs"
		runID := uuid.NewString()
		var lineNo atomic.Int64
		return forEachLine(ctx, s.importFile, func(ctx context.Context, line []byte) error {
			var key struct {
				PK string `json:"pk"`
			}
			if err := json.Unmarshal(line, &key); err != nil {
				return err
			}
			pk, _ := json.Marshal([]string{key.PK})
			h := http.Header{}
			h.Set("Content-Type", "application/json")
			h.Set(cosmos.HeaderPartitionKey, string(pk))
			h.Set(cosmos.HeaderPrefer, cosmos.PreferMinimal)
			body := line
			if upsert {
				h.Set(cosmos.HeaderIsUpsert, "True")
			} else {
				body = make([]byte, 0, len(line)+64)
				body = append(body, line[:len(line)-1]...)
				body = append(body, `,"_trackingId":"`...)
				body = append(body, runID...)
				body = append(body, ':')
				body = strconv.AppendInt(body, lineNo.Add(1), 10)
				body = append(body, `"}`...)
			}
			resp, err := f.do(ctx, http.MethodPost, path, h, body, http.StatusCreated)
			if err != nil {
				return err
			}
			discard(resp)
			return nil
		})
	}
}

// floorChanges reads each range's change feed from the beginning, one reader per
// range, pages of readPageSize, each next page asked for with the last one's etag,
// until the range answers 304; with lines, as floor-lines.
func (s *suite) floorChanges(lines bool) func(context.Context, string) (int, error) {
	return func(ctx context.Context, container string) (int, error) {
		return s.floorChangesRun(ctx, container, lines)
	}
}

func (s *suite) floorChangesRun(ctx context.Context, container string, lines bool) (int, error) {
	f := s.newFloorClient()
	defer f.close()
	path := "/dbs/" + database + "/colls/" + container + "/docs"
	out := &lineWriter{}
	return perRange(ctx, s, container, f, func(ctx context.Context, rangeID string) (int, error) {
		items, etag := 0, ""
		var bufs pageBuffers
		for {
			h := http.Header{}
			h.Set(cosmos.HeaderAIM, "Incremental feed")
			h.Set(cosmos.HeaderPartitionKeyRangeID, rangeID)
			h.Set(cosmos.HeaderMaxItemCount, strconv.Itoa(readPageSize))
			if etag != "" {
				h.Set(cosmos.HeaderIfNoneMatch, etag)
			}
			resp, err := f.do(ctx, http.MethodGet, path, h, nil, http.StatusOK, http.StatusNotModified)
			if err != nil {
				return items, err
			}
			n, err := consume(resp, lines, out, &bufs)
			if err != nil {
				return items, err
			}
			if resp.StatusCode == http.StatusNotModified {
				return items, nil
			}
			items += n
			etag = resp.Header.Get(cosmos.HeaderETag)
		}
	})
}

// floorQuery runs SELECT * FROM c on each range, one reader per range, pages of
// readPageSize, following x-ms-continuation: the floor of both query --all and export;
// with lines, as floor-lines.
func (s *suite) floorQuery(lines bool) func(context.Context, string) (int, error) {
	return func(ctx context.Context, container string) (int, error) {
		return s.floorQueryRun(ctx, container, lines)
	}
}

func (s *suite) floorQueryRun(ctx context.Context, container string, lines bool) (int, error) {
	f := s.newFloorClient()
	defer f.close()
	out := &lineWriter{}
	path := "/dbs/" + database + "/colls/" + container + "/docs"
	body := []byte(`{"query":"SELECT * FROM c","parameters":[]}`)
	return perRange(ctx, s, container, f, func(ctx context.Context, rangeID string) (int, error) {
		items, continuation := 0, ""
		var bufs pageBuffers
		for {
			h := http.Header{}
			h.Set(cosmos.HeaderIsQuery, "True")
			h.Set("Content-Type", "application/query+json")
			h.Set(cosmos.HeaderEnableCrossPartition, "True")
			h.Set(cosmos.HeaderPartitionKeyRangeID, rangeID)
			h.Set(cosmos.HeaderMaxItemCount, strconv.Itoa(readPageSize))
			if continuation != "" {
				h.Set(cosmos.HeaderContinuation, continuation)
			}
			resp, err := f.do(ctx, http.MethodPost, path, h, body, http.StatusOK)
			if err != nil {
				return items, err
			}
			n, err := consume(resp, lines, out, &bufs)
			if err != nil {
				return items, err
			}
			items += n
			if continuation = resp.Header.Get(cosmos.HeaderContinuation); continuation == "" {
				return items, nil
			}
		}
	})
}

// pageBuffers are one reader's body and page buffers, reused from page to page.
type pageBuffers struct {
	body bytes.Buffer
	page []byte
}

// consume reads a page's body and returns its items: discarded and counted from
// x-ms-item-count, or, with lines, split into items written to out as lines and counted
// as they were written. A 304 has none.
func consume(resp *http.Response, lines bool, out *lineWriter, bufs *pageBuffers) (int, error) {
	if !lines {
		discard(resp)
		if resp.StatusCode == http.StatusNotModified {
			return 0, nil
		}
		n, err := strconv.Atoi(resp.Header.Get(cosmos.HeaderItemCount))
		if err != nil {
			return 0, fmt.Errorf("a page without %s", cosmos.HeaderItemCount)
		}
		return n, nil
	}
	body := &bufs.body
	body.Reset()
	if resp.ContentLength > 0 {
		body.Grow(int(resp.ContentLength) + 1)
	}
	_, err := body.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode == http.StatusNotModified {
		return 0, err
	}
	items, err := docfeed.Items(body.Bytes())
	if err != nil {
		return 0, err
	}
	page := bufs.page[:0]
	for _, it := range items {
		page = append(append(page, it...), '\n')
	}
	bufs.page = page
	return out.write(page), nil
}

// lineWriter stands for stdout: it counts the lines written to it and keeps nothing.
// The readers of all ranges write to it, one page a write.
type lineWriter struct {
	mu    sync.Mutex
	lines int
}

// write writes a page of lines and returns how many it held.
func (w *lineWriter) write(p []byte) int {
	n := bytes.Count(p, []byte{'\n'})
	w.mu.Lock()
	w.lines += n
	w.mu.Unlock()
	return n
}

// perRange runs read on every range of the container at once and adds up the items.
func perRange(ctx context.Context, s *suite, container string, f *floorClient, read func(context.Context, string) (int, error)) (int, error) {
	ids, err := s.ranges(ctx, container, f.http)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var total atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			n, err := read(ctx, id)
			total.Add(int64(n))
			if err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	return int(total.Load()), first
}
