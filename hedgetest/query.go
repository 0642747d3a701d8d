package hedgetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
)

// Op is the kind of operation a workload repeats.
type Op string

const (
	// OpRead is a point read of an item.
	OpRead Op = "read"
	// OpQuery is one page of a query within an item's partition key (QueryPage): a
	// single engine operation, hedged like a point read, and learned apart from reads
	// by the adaptive strategy.
	OpQuery Op = "query"
	// OpQueryCross is a whole cross-partition query (QueryCross) through the query
	// pipeline: its plan, then a page from every partition key range in parallel,
	// merged. Its latency is the slowest page's, so a slow region's tail shows in more
	// queries than in reads; every page is hedged on its own.
	OpQueryCross Op = "query-cross"
)

// Ops lists the operations in a stable order, for help and errors.
var Ops = []Op{OpRead, OpQuery, OpQueryCross}

// QueryPage is the query of OpQuery, run within the item's partition key: an
// application's "the items of this key" lookup, one page.
const QueryPage = "SELECT * FROM c WHERE c.id = @id"

// QueryCross is the query of OpQueryCross: the items hedge-test wrote, newest first,
// the first ten: a plan, a page from each range and a k-way merge, and a filter so that
// on a real account it reads only hedge-test's own items.
const QueryCross = "SELECT TOP 10 c.id, c._ts FROM c WHERE c.purpose = @purpose ORDER BY c._ts DESC"

// ParseOp reads --op.
func ParseOp(s string) (Op, error) {
	op := Op(s)
	if err := op.check(); err != nil {
		return "", err
	}
	if op == "" {
		op = OpRead
	}
	return op, nil
}

func (o Op) check() error {
	switch o {
	case "", OpRead, OpQuery, OpQueryCross:
		return nil
	}
	return fmt.Errorf("--op %q: the workload is read (point reads), query (a query page within a partition key) or query-cross (a cross-partition TOP 10 ORDER BY)", string(o))
}

// Noun names one operation in progress lines and tables: "reads", "query pages", "queries".
func (o Op) Noun() string {
	switch o {
	case OpQuery:
		return "query pages"
	case OpQueryCross:
		return "queries"
	}
	return "reads"
}

// operation is the engine operation of a read or a query page of item.
func (o Op) operation(tmpl engine.Operation, item Item) engine.Operation {
	op := tmpl
	op.PartitionKey = item.PartitionKey
	if o != OpQuery {
		op.ID = item.ID
		return op
	}
	id, _ := json.Marshal(item.ID)
	op.Kind = engine.OpQuery
	op.Query = &cosmos.QuerySpec{Query: QueryPage, Parameters: []cosmos.QueryParameter{{Name: "@id", Value: id}}}
	return op
}

// crossQuery runs QueryCross to the end and returns the diagnostics of every request it
// sent, the plan and the pages (reads of the partition key ranges, served from the
// routing cache after the first, count when they went on the wire).
func crossQuery(ctx context.Context, client *engine.Client, w Workload, tmpl engine.Operation) ([]*engine.Diagnostics, error) {
	purpose, _ := json.Marshal(itemPurpose)
	page := tmpl
	page.Kind = ""
	it, err := query.Run(ctx, query.Options{Client: client, Database: w.Database, Container: w.Container,
		Spec: cosmos.QuerySpec{Query: QueryCross, Parameters: []cosmos.QueryParameter{{Name: "@purpose", Value: purpose}}}, Page: page})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var took []*engine.Diagnostics
	for {
		_, info, err := it.Next(ctx)
		if info != nil && info.Diagnostics != nil && len(info.Diagnostics.Attempts) > 0 {
			took = append(took, info.Diagnostics)
		}
		switch {
		case errors.Is(err, io.EOF):
			return took, nil
		case err != nil:
			return took, err
		}
	}
}

// winnerCharge is the request charge of the answer an operation used.
func winnerCharge(d *engine.Diagnostics) float64 {
	for _, a := range d.Attempts {
		if a.N == d.WinningAttempt {
			return a.RequestCharge
		}
	}
	return 0
}
