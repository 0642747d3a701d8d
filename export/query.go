package export

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/query"
)

// QuerySource exports a query's items through the query pipeline (query.Run): within a
// partition key, or across partitions with every range read in parallel. Its position
// is the pipeline's continuation token, which resumes after the items returned, each
// exactly once.
//
// A plain query reads each range in the order of the items' resource ids, which an
// update keeps, and resumes after the last one returned: an item that exists from the
// start to the end is returned exactly once, in the version its page read, however the
// container changes meanwhile.
type QuerySource struct{ it *query.Iterator }

// NewQuerySource starts the query; a Position of an earlier run (a JSON string, or null)
// resumes it.
func NewQuerySource(ctx context.Context, o query.Options, position json.RawMessage) (*QuerySource, error) {
	if len(position) > 0 && string(position) != "null" {
		if err := json.Unmarshal(position, &o.Continuation); err != nil {
			return nil, &engine.InputError{Msg: fmt.Sprintf("the state's query position is not a continuation token: %v", err)}
		}
	}
	// Each page is written out before the next is asked for (Source): its buffer can
	// serve a later page.
	o.ReuseItemMemory = true
	it, err := query.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	return &QuerySource{it: it}, nil
}

func (s *QuerySource) Next(ctx context.Context) (Page, error) {
	items, info, err := s.it.Next(ctx)
	p := Page{Items: items}
	if info != nil {
		p.RequestCharge, p.Requests = info.RequestCharge, 1
		if d := info.Diagnostics; d != nil {
			for _, a := range d.Attempts {
				if a.StatusCode == 429 {
					p.Throttled++
				}
			}
		}
	}
	return p, err
}

func (s *QuerySource) Position() (json.RawMessage, error) {
	tok := s.it.Continuation()
	if tok == "" {
		if why := s.it.Unresumable(); why != "" {
			return nil, &UnresumableError{Why: why}
		}
		return json.RawMessage("null"), nil
	}
	return json.Marshal(tok)
}

func (s *QuerySource) Close() { s.it.Close() }

// Stats are the pipeline's totals (regions contacted, splits).
func (s *QuerySource) Stats() query.Totals { return s.it.Stats() }
