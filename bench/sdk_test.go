package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// The official Go SDK (azcosmos, the version in go.mod) doing the same work as
// cosmosctl, as its documentation shows it done: a new client each run (as a command's
// process has), its own retries and defaults, the items as it hands them over.

func (s *suite) sdkContainer(container string) (*azcosmos.ContainerClient, func(), error) {
	cred, err := azcosmos.NewKeyCredential(s.emu.key)
	if err != nil {
		return nil, nil, err
	}
	client, err := azcosmos.NewClientWithKey(s.emu.endpoint, cred, &azcosmos.ClientOptions{})
	if err != nil {
		return nil, nil, err
	}
	c, err := client.NewContainer(database, container)
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return c, client.Close, nil
}

// sdkImport writes every line with CreateItem (UpsertItem), importConcurrency calls in
// flight, each with the partition key read from its line.
func (s *suite) sdkImport(upsert bool) func(context.Context, string) (int, error) {
	return func(ctx context.Context, container string) (int, error) {
		c, done, err := s.sdkContainer(container)
		if err != nil {
			return 0, err
		}
		defer done()
		return forEachLine(ctx, s.importFile, func(ctx context.Context, line []byte) error {
			var key struct {
				PK string `json:"pk"`
			}
			if err := json.Unmarshal(line, &key); err != nil {
				return err
			}
			pk := azcosmos.NewPartitionKeyString(key.PK)
			if upsert {
				_, err := c.UpsertItem(ctx, pk, line, nil)
				return err
			}
			_, err := c.CreateItem(ctx, pk, line, nil)
			return err
		})
	}
}

// sdkChanges reads the change feed from the beginning with one reader per feed range
// (ReadFeedRanges), each calling ReadChangeFeed with its continuation, pages of
// readPageSize, until a call returns nothing.
func (s *suite) sdkChanges(ctx context.Context, container string) (int, error) {
	c, done, err := s.sdkContainer(container)
	if err != nil {
		return 0, err
	}
	defer done()
	ranges, err := c.ReadFeedRanges(ctx, nil)
	if err != nil {
		return 0, err
	}
	var total atomic.Int64
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	for i, r := range ranges {
		wg.Go(func() {
			opts := azcosmos.ChangeFeedOptions{FeedRange: &r, MaxItemCount: readPageSize}
			for {
				resp, err := c.ReadChangeFeed(ctx, &opts)
				if err != nil {
					errs[i] = err
					return
				}
				if len(resp.Items) == 0 {
					return
				}
				total.Add(int64(len(resp.Items)))
				opts.Continuation = &resp.ContinuationToken
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return int(total.Load()), err
		}
	}
	return int(total.Load()), nil
}

// sdkQuery runs SELECT * FROM c across partitions (NewQueryItemsPager with an empty
// partition key: the SDK's one way to read a whole container; it has no per-range
// query), pages of readPageSize: the SDK's export and query --all.
func (s *suite) sdkQuery(ctx context.Context, container string) (int, error) {
	c, done, err := s.sdkContainer(container)
	if err != nil {
		return 0, err
	}
	defer done()
	pager := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: readPageSize})
	items := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return items, err
		}
		items += len(page.Items)
	}
	return items, nil
}

// forEachLine calls write for every line of the file, importConcurrency calls at once,
// and returns how many succeeded; the first failure stops the rest.
func forEachLine(ctx context.Context, path string, write func(context.Context, []byte) error) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := make(chan []byte, importConcurrency)
	var ok atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range importConcurrency {
		wg.Go(func() {
			for line := range lines {
				if err := write(ctx, line); err != nil {
					once.Do(func() { first = fmt.Errorf("%s: %w", line, err); cancel() })
					continue
				}
				ok.Add(1)
			}
		})
	}
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(line) == 0 {
			continue
		}
		select {
		case lines <- line:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(lines)
	wg.Wait()
	return int(ok.Load()), first
}
