package emulator

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// queryPosition is where a query page ended, in partition key range Range, Returned
// rows of the result order into the query (TOP, OFFSET and LIMIT count them).
//
// A streaming query (Kind "") scans in creation order (the order of _rid) and ended
// after the document with creation sequence Seq: the position stays valid when
// documents are inserted, replaced or deleted between pages, because an insert sorts
// after every existing document and is neither skipped nor repeated, unlike an offset,
// which shifts under it. An ORDER BY query (Kind "o") ended after the row with ORDER BY
// values Keys (the orderByItems form, [{"item": v}, …]) and creation sequence Seq, and
// resumes after that point of the sorted order, which is as stable. Other materialized
// results (Kind "m": DISTINCT, aggregates, GROUP BY) resume at row Index. Query is the
// fingerprint of the query, its parameters and the partition key, so that a token is
// not applied to another query.
//
// The position lies within the effective partition keys [Lo, Hi) of Range, when the
// page read part of the range only (Hi is set then), else within the whole range:
// its span (querytarget.go), which a split or merge does not change.
type queryPosition struct {
	Version  int             `json:"v"`
	Range    string          `json:"r"`
	Lo       string          `json:"lo,omitempty"`
	Hi       string          `json:"hi,omitempty"`
	Seq      uint64          `json:"s"`
	Returned int             `json:"n,omitempty"`
	Kind     string          `json:"k,omitempty"`
	Keys     json.RawMessage `json:"o,omitempty"`
	Index    int             `json:"i,omitempty"`
	Query    string          `json:"q,omitempty"`
}

// Kinds of query positions.
const (
	positionScan    = ""
	positionOrdered = "o"
	positionRows    = "m"
)

const queryPositionVersion = 1

// token renders the position as the opaque x-ms-continuation value clients echo back.
func (p queryPosition) token() string {
	p.Version = queryPositionVersion
	b, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseQueryContinuation reads a token that token() produced. Offset tokens of older
// emulators ({"skip":N}) are refused by name: resuming them would skip or repeat items.
func parseQueryContinuation(v string) (queryPosition, error) {
	var p queryPosition
	if strings.HasPrefix(strings.TrimSpace(v), "{") {
		var old struct {
			Skip *int `json:"skip"`
		}
		if json.Unmarshal([]byte(v), &old) == nil && old.Skip != nil {
			return p, errors.New("the continuation token is an offset token from an older emulator version, which could skip or repeat items: restart the query without a continuation token")
		}
		return p, errors.New("the continuation token is not one this emulator issued")
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &p) != nil || p.Version != queryPositionVersion || p.Range == "" || p.Returned < 0 || p.Index < 0 ||
		(p.Kind != positionScan && p.Kind != positionOrdered && p.Kind != positionRows) || (p.Hi == "" && p.Lo != "") || (p.Hi != "" && p.Lo >= p.Hi) {
		return queryPosition{}, errors.New("the continuation token is not one this emulator issued")
	}
	return p, nil
}

// maxItemCount reads x-ms-max-item-count: a positive page size, or -1 for the largest
// page the emulator serves.
func (s *Server) maxItemCount(req *request) (int, bool) {
	v := req.r.Header.Get(cosmos.HeaderMaxItemCount)
	if v == "" {
		return defaultPageItems, true
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < -1 || n == 0:
		s.writeError(req, badRequest("%s must be a positive number or -1, not %q", cosmos.HeaderMaxItemCount, v), 0)
		return 0, false
	case n == -1 || n > maxPageItems:
		return maxPageItems, true
	}
	return n, true
}
