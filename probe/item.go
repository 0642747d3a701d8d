package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/retries"
)

// probeItem returns the read operation of the probe: Options.ID and PartitionKey as
// given, or the probe item, created on first use.
func probeItem(ctx context.Context, errOut io.Writer, opts Options, regions, all []string, timeout time.Duration) (engine.Operation, error) {
	op := engine.Operation{Kind: engine.OpRead, Database: opts.Database, Container: opts.Container, E2ETimeout: timeout}
	if op.Database == "" || op.Container == "" {
		return op, usageErrorf("no database or container: give --database and --container (or set them in a profile), or use --account-only")
	}
	if opts.ID != "" {
		op.ID, op.PartitionKey = opts.ID, opts.PartitionKey
		return op, nil
	}
	client := opts.Client
	paths, err := client.PartitionKeyPaths(ctx, op.Database, op.Container)
	if err != nil {
		return op, asUsage(err)
	}
	pk, err := itemKey(len(paths))
	if err != nil {
		return op, err
	}
	op.ID, op.PartitionKey = ItemID, pk
	_, err = client.Execute(ctx, op)
	if status, sub, _ := cosmos.Status(err); status != 404 || sub != 0 {
		return op, asUsage(err)
	}
	up := op
	up.Kind, up.Body = engine.OpUpsert, itemDocument(paths)
	if _, err := client.Execute(ctx, up); err != nil {
		return op, fmt.Errorf("creating the probe item %q in %s/%s: %w (or probe an existing item with --id and --pk, or the endpoints with --account-only)", ItemID, op.Database, op.Container, asUsage(err))
	}
	fmt.Fprintf(errOut, "cosmosctl: created the probe item %q in %s/%s (partition key %s)\n", ItemID, op.Database, op.Container, pk.JSON())
	awaitReplication(ctx, client.Derive(nil, retries.Policy{}), op, regions, all)
	return op, nil
}

// itemKey is the probe item's partition key in a container with n partition key paths:
// ItemID at every level.
func itemKey(n int) (cosmos.PartitionKey, error) {
	values := make([]any, n)
	for i := range values {
		values[i] = ItemID
	}
	return cosmos.PK(values...)
}

// itemDocument is the probe item: its id, and the same value at every partition key path.
func itemDocument(paths []string) []byte {
	doc := map[string]any{"id": ItemID}
	for _, path := range paths {
		cur := doc
		segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i, seg := range segs {
			if i == len(segs)-1 {
				cur[seg] = ItemID
				break
			}
			next, ok := cur[seg].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[seg] = next
			}
			cur = next
		}
	}
	b, _ := json.Marshal(doc)
	return b
}

// awaitReplication waits, briefly, until a newly created probe item can be read in every
// probed region, so that replication lag is not reported as 404s. Whatever is still
// missing after the wait shows in the results.
func awaitReplication(ctx context.Context, client *engine.Client, op engine.Operation, regions, all []string) {
	ctx, cancel := context.WithTimeout(ctx, replicationWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, region := range regions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read := op
			read.ExcludeRegions = without(all, region)
			for {
				_, err := client.Execute(ctx, read)
				// 404/0 (not there yet) and 404/1002 (this region's replica is behind).
				if status, _, _ := cosmos.Status(err); status != 404 {
					return
				}
				t := time.NewTimer(100 * time.Millisecond)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
}
