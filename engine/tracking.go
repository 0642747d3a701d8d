package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/retries"
)

// TrackingIDProperty is the document property that lets a retried write recognise its
// own earlier success. It stays in the stored document.
const TrackingIDProperty = "_trackingId"

// withTrackingID returns the document with _trackingId set to id, keeping the order of
// the other top-level properties.
func withTrackingID(body []byte, id string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, inputErrorf("the document is not a JSON object")
	}
	var out bytes.Buffer
	out.Grow(len(body) + 64)
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, inputErrorf("the document is not valid JSON: %v", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, inputErrorf("the document is not valid JSON: %v", err)
		}
		if key == TrackingIDProperty {
			continue
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(raw)
		out.WriteByte(',')
	}
	fmt.Fprintf(&out, `%q:%q}`, TrackingIDProperty, id)
	return out.Bytes(), nil
}

// ownConflict reports whether a response may be the echo of this operation's own earlier
// success: a 409 to a create or a 412 to a replace, after more than one request of the
// operation was sent (a retry, or a hedge on a multi-write account), or after any when
// the caller says the write may have been sent before (SentBefore).
func ownConflict(op *Operation, resp *cosmos.Response, sent int) bool {
	if op.trackingID == "" || resp == nil || (sent < 2 && !op.SentBefore) {
		return false
	}
	return (op.Kind == OpCreate && resp.StatusCode == 409) || (op.Kind == OpReplace && resp.StatusCode == 412)
}

// verifyTrackingID reads the item in region and reports whether it carries this
// operation's _trackingId. When it does, the returned response stands for the write's
// success: 201 for a create, 200 for a replace, with the stored item.
func (c *Client) verifyTrackingID(ctx context.Context, rec *recorder, op *Operation, region cosmos.Location, conflict *cosmos.Response) (*cosmos.Response, int, bool) {
	req := &cosmos.Request{Method: http.MethodGet, Path: cosmos.ItemPath(op.Database, op.Container, op.ID), Header: http.Header{}}
	req.Header.Set(cosmos.HeaderPartitionKey, op.partitionKeyJSON())
	i := rec.begin(region.Name, endpointOf(region), ReasonVerify)
	resp, err := c.do(ctx, ClassPoint, endpointOf(region), req)
	if resp == nil {
		rec.finish(i, 0, 0, 0, "", err.Error())
		rec.setOutcome(i, OutcomeFailed, "could not read the item to check its _trackingId")
		return nil, i, false
	}
	rec.finishResponse(i, resp)
	var doc struct {
		TrackingID string `json:"_trackingId"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(resp.Body, &doc) != nil || doc.TrackingID != op.trackingID {
		what := "a different _trackingId"
		switch {
		case resp.StatusCode != 200:
			what = fmt.Sprintf("status %d", resp.StatusCode)
		case doc.TrackingID == "":
			what = "no _trackingId"
		}
		rec.setOutcome(i, OutcomeFailed, fmt.Sprintf("the stored item has %s: the %d stands", what, conflict.StatusCode))
		return nil, i, false
	}
	status := http.StatusCreated
	if op.Kind == OpReplace {
		status = http.StatusOK
	}
	resolved := *resp
	resolved.StatusCode, resolved.SubStatus = status, 0
	// The write is reported with what it cost in all: every attempt and the check.
	rec.mu.Lock()
	resolved.RequestCharge = rec.d.RequestCharge
	rec.mu.Unlock()
	how := "on retry"
	if rec.sent() < 2 {
		how = "to a write sent before"
	}
	rec.resolve(fmt.Sprintf("%d %s resolved: _trackingId matches", conflict.StatusCode, how))
	return &resolved, i, true
}

// writePolicyNote explains a write's retry policy in the diagnostics.
func writePolicyNote(p retries.WritePolicy) string {
	switch p {
	case retries.WriteRetries:
		return "write retries: on (a retry's 409 or 412 stands)"
	case retries.WriteRetriesWithTrackingID:
		return "write retries: on, with _trackingId (stays in the stored document)"
	}
	return "write retries: off"
}

func newTrackingID() string { return uuid.NewString() }
