package export

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/engine"
)

// FeedSource exports a snapshot of the change feed (latest version mode): every range
// read from the beginning up to the position it had when the source opened
// (changefeed.StartPoint), at most one unread batch per range. Its position is the
// feed's State, which keeps each range's stop position, so that a resumed export ends
// at the same point.
//
// What the snapshot holds follows from the latest version mode, where an item is in the
// feed once, at its latest change: an item not changed since the start is there once, as
// it was; one changed after the start is there in its earlier version if its range had
// delivered it by then, and missing otherwise (its one entry moved past the stop
// position); one created after the start is not there; one deleted after the start is
// there if delivered before. The query source has no such gap (see QuerySource).
type FeedSource struct{ f *changefeed.Feed }

// NewFeedSource opens the feed; a Position of an earlier run (a changefeed.State, or
// null) resumes it. The caller has checked that the position is this export's, so the
// account endpoint it names is taken to be this client's (the embedded emulator's
// ports change from run to run).
func NewFeedSource(ctx context.Context, o changefeed.Options, position json.RawMessage) (*FeedSource, error) {
	o.From, o.Until = changefeed.StartFrom{Kind: changefeed.Beginning}, changefeed.StartPoint
	if len(position) > 0 && string(position) != "null" {
		var st changefeed.State
		if err := json.Unmarshal(position, &st); err != nil {
			return nil, &engine.InputError{Msg: fmt.Sprintf("the state's change feed position is not one: %v", err)}
		}
		st.Endpoint = o.Client.Endpoint()
		o.State = &st
	}
	// Each page is written out before the next is asked for (Source): its buffer can
	// serve a later poll.
	o.ReuseItemMemory = true
	f, err := changefeed.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	return &FeedSource{f: f}, nil
}

func (s *FeedSource) Next(ctx context.Context) (Page, error) {
	b, err := s.f.Next(ctx)
	if b == nil {
		return Page{}, err
	}
	p := Page{Items: b.Items, RequestCharge: b.Info.RequestCharge, Requests: 1}
	if d := b.Info.Diagnostics; d != nil {
		for _, a := range d.Attempts {
			if a.StatusCode == 429 {
				p.Throttled++
			}
		}
	}
	if p.Throttled == 0 && b.Info.Err != nil && b.Info.StatusCode == 429 {
		p.Throttled = 1
	}
	return p, err
}

func (s *FeedSource) Position() (json.RawMessage, error) { return json.Marshal(s.f.State()) }

func (s *FeedSource) Close() { s.f.Close() }
