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
)

// The floor: what the work costs on the wire, hand-made REST requests signed with the
// master key (the cosmos package signs them and names the headers, nothing more), the
// same concurrency as the others, no engine, no retries, no hedging, no diagnostics,
// bodies read to io.Discard (the counts come from x-ms-item-count). Any error ends the
// run. A new HTTP client (connection pool) each run, as a command's process has.

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
// parse) and Prefer: return=minimal, as the SDK sends: 201 counts.
func (s *suite) floorImport(upsert bool) func(context.Context, string) (int, error) {
	return func(ctx context.Context, container string) (int, error) {
		f := s.newFloorClient()
		defer f.close()
		path := "/dbs/" + database + "/colls/" + container + "/docs"
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
			if upsert {
				h.Set(cosmos.HeaderIsUpsert, "True")
			}
			resp, err := f.do(ctx, http.MethodPost, path, h, line, http.StatusCreated)
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
// until the range answers 304.
func (s *suite) floorChanges(ctx context.Context, container string) (int, error) {
	f := s.newFloorClient()
	defer f.close()
	path := "/dbs/" + database + "/colls/" + container + "/docs"
	return perRange(ctx, s, container, f, func(ctx context.Context, rangeID string) (int, error) {
		items, etag := 0, ""
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
			discard(resp)
			if resp.StatusCode == http.StatusNotModified {
				return items, nil
			}
			n, err := strconv.Atoi(resp.Header.Get(cosmos.HeaderItemCount))
			if err != nil {
				return items, fmt.Errorf("a change feed page without %s", cosmos.HeaderItemCount)
			}
			items += n
			etag = resp.Header.Get(cosmos.HeaderETag)
		}
	})
}

// floorQuery runs SELECT * FROM c on each range, one reader per range, pages of
// readPageSize, following x-ms-continuation: the floor of both query --all and export.
func (s *suite) floorQuery(ctx context.Context, container string) (int, error) {
	f := s.newFloorClient()
	defer f.close()
	path := "/dbs/" + database + "/colls/" + container + "/docs"
	body := []byte(`{"query":"SELECT * FROM c","parameters":[]}`)
	return perRange(ctx, s, container, f, func(ctx context.Context, rangeID string) (int, error) {
		items, continuation := 0, ""
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
			discard(resp)
			n, err := strconv.Atoi(resp.Header.Get(cosmos.HeaderItemCount))
			if err != nil {
				return items, fmt.Errorf("a query page without %s", cosmos.HeaderItemCount)
			}
			items += n
			if continuation = resp.Header.Get(cosmos.HeaderContinuation); continuation == "" {
				return items, nil
			}
		}
	})
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
