package leases

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// Position is where a lease's change feed continues in one part of its range: the etag
// to send as If-None-Match ("" from the beginning, engine.ChangeFeedFromNow from now).
// Range is the part it applies to, nil for all of the lease.
type Position struct {
	Range *cosmos.EPKRange
	ETag  string
}

// The continuations a lease holds:
//
//   - An etag, "\"42\"": what the .NET processor checkpoints (ChangeFeedPartitionKey-
//     ResultSetIteratorCore keeps the response's ETag as its continuation and reads on
//     with ChangeFeedStartFromContinuationAndFeedRange(etag, feedRange)), and the Java
//     partition key range processor too (ServiceItemLease.getContinuationState,
//     ChangeFeedStartFromETagAndFeedRange). The service's change feed etag is the
//     range's LSN in quotes; a bare number is taken as one.
//   - The .NET v3 composite continuation, {"V":2,"Rid":…,"Continuation":[{"FeedRange":
//     {"type":"Effective Partition Key Range","value":{"min":…,"max":…}},"State":{"type":
//     "continuation","value":"\"42\""}}]} (FeedRange/Continuations/
//     FeedRangeCompositeContinuation.cs; the shape is quoted in the SDK's own
//     TokenMigrationTest), whose State may also be "beginning" or "now".
//   - The older composite token both SDKs wrote, [{"token":"\"42\"","range":{"min":…,
//     "max":…}}] (Java query/CompositeContinuationToken.java: "token", "range").
//   - The Java effective partition key range lease's base64 ChangeFeedStateV1:
//     {"V":1,"Rid":…,"Mode":"INCREMENTAL","StartFrom":{"Type":"BEGINNING"},
//     "Continuation":{"V":1,"Rid":…,"Continuation":[{"token":"\"42\"","range":{…}}],…}}
//     (implementation/Constants.java names "V", "Rid", "Mode", "StartFrom", "Type",
//     "Continuation"; the Spark connector's tests build such a state literally).

// ParseContinuation reads a lease's ContinuationToken: the positions it holds. An empty
// token holds none (the lease was never checkpointed).
func ParseContinuation(tok string) ([]Position, error) {
	s := strings.TrimSpace(tok)
	switch {
	case s == "":
		return nil, nil
	case strings.HasPrefix(s, `"`):
		if len(s) < 2 || !strings.HasSuffix(s, `"`) {
			return nil, fmt.Errorf("the continuation %q is not an etag: an opening quote without its closing one", tok)
		}
		return []Position{{ETag: s}}, nil
	case isDigits(s):
		return []Position{{ETag: `"` + s + `"`}}, nil
	case strings.HasPrefix(s, "{"), strings.HasPrefix(s, "["):
		return parseJSONContinuation([]byte(s))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) > 0 && b[0] == '{' {
			return parseJSONContinuation(b)
		}
	}
	return nil, fmt.Errorf("the continuation %q is not one either SDK writes (an etag, a composite continuation, or a base64 change feed state)", abbreviate(tok))
}

// composite is any of the JSON continuations, each field where its shape has it.
type composite struct {
	V            json.Number     `json:"V"`
	Continuation json.RawMessage `json:"Continuation"`
	StartFrom    *struct {
		Type string `json:"Type"`
	} `json:"StartFrom"`
}

// compositeEntry is one range's entry: .NET's FeedRange and State, or the older
// token and range.
type compositeEntry struct {
	FeedRange *struct {
		Value *cosmos.EPKRange `json:"value"`
	} `json:"FeedRange"`
	State *struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"State"`
	Token *string          `json:"token"`
	Range *cosmos.EPKRange `json:"range"`
}

func parseJSONContinuation(b []byte) ([]Position, error) {
	if b[0] == '[' {
		return parseEntries(b)
	}
	var c composite
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("the continuation is not JSON either SDK writes: %v", err)
	}
	cont := strings.TrimSpace(string(c.Continuation))
	switch {
	case strings.HasPrefix(cont, "["):
		return parseEntries(c.Continuation)
	case strings.HasPrefix(cont, "{"):
		// Java's change feed state: the composite continuation is inside.
		var inner composite
		if err := json.Unmarshal(c.Continuation, &inner); err != nil || !strings.HasPrefix(strings.TrimSpace(string(inner.Continuation)), "[") {
			return nil, fmt.Errorf("the change feed state's Continuation holds no list of ranges")
		}
		return parseEntries(inner.Continuation)
	case c.StartFrom != nil:
		// A Java state not yet continued: where the processor starts.
		switch strings.ToUpper(c.StartFrom.Type) {
		case "BEGINNING":
			return []Position{{ETag: ""}}, nil
		case "NOW":
			return []Position{{ETag: engine.ChangeFeedFromNow}}, nil
		}
		return nil, fmt.Errorf("the change feed state starts from %q, which cosmosctl does not estimate from", c.StartFrom.Type)
	}
	return nil, fmt.Errorf("the continuation is JSON without a Continuation either SDK writes")
}

func parseEntries(b []byte) ([]Position, error) {
	var entries []compositeEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("the composite continuation's ranges are not a list either SDK writes: %v", err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("the composite continuation lists no range")
	}
	out := make([]Position, 0, len(entries))
	for _, e := range entries {
		var p Position
		switch {
		case e.State != nil:
			switch strings.ToLower(e.State.Type) {
			case "continuation":
				var etag string
				if err := json.Unmarshal(e.State.Value, &etag); err != nil {
					return nil, fmt.Errorf("a continuation state whose value is not a string: %s", e.State.Value)
				}
				p.ETag = etag
			case "beginning":
			case "now":
				p.ETag = engine.ChangeFeedFromNow
			default:
				return nil, fmt.Errorf("a continuation state of type %q, which cosmosctl does not estimate from", e.State.Type)
			}
			if e.FeedRange != nil && e.FeedRange.Value != nil {
				p.Range = upper(*e.FeedRange.Value)
			}
		case e.Token != nil:
			p.ETag = *e.Token
			if e.Range != nil {
				p.Range = upper(*e.Range)
			}
		default:
			return nil, fmt.Errorf("a composite continuation entry with neither a State nor a token")
		}
		out = append(out, p)
	}
	return out, nil
}

func upper(r cosmos.EPKRange) *cosmos.EPKRange {
	return &cosmos.EPKRange{Min: strings.ToUpper(r.Min), Max: strings.ToUpper(r.Max)}
}

func isDigits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:37] + "…"
	}
	return s
}

// positionFor is the position of the lease's part that covers piece: the entry whose
// range holds it, else one that overlaps it, else one for all of the lease.
func positionFor(positions []Position, piece cosmos.EPKRange) (Position, bool) {
	var whole, overlap *Position
	for i := range positions {
		p := &positions[i]
		switch {
		case p.Range == nil:
			whole = p
		case p.Range.Contains(piece):
			return *p, true
		case overlap == nil && p.Range.Overlaps(cosmos.PartitionKeyRange{MinInclusive: piece.Min, MaxExclusive: piece.Max}):
			overlap = p
		}
	}
	switch {
	case overlap != nil:
		return *overlap, true
	case whole != nil:
		return *whole, true
	}
	return Position{}, false
}

// SessionLSN is the LSN a change feed answer's session token reports for its range, as
// both SDKs' estimators read it: after the range id and ':', the '#'-separated segments
// are the version, the global LSN and each region's; the global LSN is the second, or,
// in a token of the older "<range>:<lsn>" form, the only one
// (.NET ChangeFeedEstimatorIterator.ExtractLsnFromSessionToken; Java
// IncrementalChangeFeedProcessorImpl.getEstimatedLag, "default to Global LSN").
func SessionLSN(token string) (int64, bool) {
	tok, _, _ := strings.Cut(strings.TrimSpace(token), ",")
	if tok == "" {
		return 0, false
	}
	if i := strings.IndexByte(tok, ':'); i >= 0 {
		tok = tok[i+1:]
	}
	seg := strings.Split(tok, "#")
	lsn := seg[0]
	if len(seg) >= 2 {
		lsn = seg[1]
	}
	n, err := strconv.ParseInt(lsn, 10, 64)
	return n, err == nil
}
