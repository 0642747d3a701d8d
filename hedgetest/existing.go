package hedgetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
	"github.com/cosmosctl/cosmosctl/retries"
)

// A hedge-test against a real account writes its items through the write region; when
// that region is down — which is when someone most wants to compare read strategies —
// it reads items that are already in the container instead. They are found with a
// query sent to one region at a time, pinned there and never retried, each bounded:
// the read regions other than the write region first (the writes just failed there),
// the write region last.

// ExistingQuery finds the items to read when hedge-test cannot write its own: any
// items, whole, so that their partition key can be read at the container's paths.
const ExistingQuery = "SELECT * FROM c"

// Existing is what ExistingItems found: the items, and the region whose query found them.
type Existing struct {
	Items  []Item
	Region string
}

// NoItemsError is a container in which no region's query found an item to read.
type NoItemsError struct{ Region string }

func (e *NoItemsError) Error() string {
	return fmt.Sprintf("the container has no items to read (a query in %s found none)", e.Region)
}

// ExistingItems finds up to n items of the container, from the first region in the
// order above whose query answers within attempt. It fails when no region's does (the
// error says what each got, and unwraps to the first answer that rules the query out,
// else to the first region's error), or with *NoItemsError when the container is empty.
func ExistingItems(ctx context.Context, client *engine.Client, database, container string, n int, attempt time.Duration) (Existing, error) {
	acct, err := client.Account(ctx)
	if err != nil {
		return Existing{}, err
	}
	all := acct.ReadRegions()
	order := make([]string, 0, len(all))
	var write []string
	for _, r := range all {
		if w := acct.WriteRegions(); len(w) > 0 && cosmos.SameRegion(r, w[0]) {
			write = append(write, r)
			continue
		}
		order = append(order, r)
	}
	order = append(order, write...)
	paths, err := client.PartitionKeyPaths(ctx, database, container, attempt)
	if err != nil {
		return Existing{}, err
	}
	def := cosmos.PartitionKeyDefinition{Paths: paths}
	pinned := client.Derive(nil, retries.Policy{})
	var failed []string
	var first error
	for _, region := range order {
		docs, err := queryIn(ctx, pinned, database, container, n, without(all, region), attempt)
		if err != nil {
			if ctx.Err() != nil {
				return Existing{}, ctx.Err()
			}
			if first == nil || ruledOut(err) {
				first = err
			}
			failed = append(failed, region+" "+describe(err))
			continue
		}
		found := Existing{Region: region}
		for _, doc := range docs {
			if it, ok := itemOf(doc, def); ok {
				found.Items = append(found.Items, it)
			}
		}
		if len(found.Items) == 0 {
			return found, &NoItemsError{Region: region}
		}
		return found, nil
	}
	return Existing{}, &regionsError{first: first, text: strings.Join(failed, ", ")}
}

// queryIn runs ExistingQuery for n items with every region but one excluded, bounded by
// within.
func queryIn(ctx context.Context, client *engine.Client, database, container string, n int, exclude []string, within time.Duration) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	it, err := query.Run(ctx, query.Options{Client: client, Database: database, Container: container,
		Spec: cosmos.QuerySpec{Query: ExistingQuery}, MaxItems: n, PageSize: n,
		Page: engine.Operation{ExcludeRegions: exclude, E2ETimeout: within}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var docs []json.RawMessage
	for {
		items, _, err := it.Next(ctx)
		docs = append(docs, items...)
		switch {
		case errors.Is(err, io.EOF):
			return docs, nil
		case err != nil:
			return nil, err
		}
	}
}

// itemOf is the item doc is, with its partition key at the container's paths; false
// for a document without an id or a value at every path.
func itemOf(doc json.RawMessage, def cosmos.PartitionKeyDefinition) (Item, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return Item{}, false
	}
	id, _ := m["id"].(string)
	pk, err := engine.PartitionKeyOfDocument(m, def)
	if id == "" || err != nil {
		return Item{}, false
	}
	return Item{ID: id, PartitionKey: pk}, true
}

// regionsError is what each region's query got when none answered.
type regionsError struct {
	first error // the one to classify by
	text  string
}

func (e *regionsError) Error() string { return "no region could query the container: " + e.text }
func (e *regionsError) Unwrap() error { return e.first }

// WriteUnavailable reports a failed write that another region could serve a read for:
// the write region down, hung, refusing or throttling, or a write forbidden there. An
// answer about the request or the account (no container, a key that may not do this, a
// bad document) is not: a read would get the same.
func WriteUnavailable(err error) bool {
	return err != nil && !ruledOut(err)
}

// ruledOut reports an answer that says something about the request or the account
// rather than about a region's health.
func ruledOut(err error) bool {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return true
	}
	status, sub, ok := cosmos.Status(err)
	if !ok {
		return false
	}
	switch status {
	case 400, 401, 405, 409, 412, 413:
		return true
	case 404:
		return sub != cosmos.SubReadSessionNotAvailable
	case 403:
		return sub != cosmos.SubWriteForbidden
	}
	return false
}

// without returns list less s, in a new slice.
func without(list []string, s string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
