package engine

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// prepareQuery validates a query page or query plan operation: the query, its
// parameters, and exactly one target (a partition key, a partition key range, or the
// whole container with cross-partition enabled).
func prepareQuery(op *Operation) error {
	if op.Query == nil || strings.TrimSpace(op.Query.Query) == "" {
		return inputErrorf("no query given: pass the SQL text, e.g. 'SELECT * FROM c'")
	}
	for _, p := range op.Query.Parameters {
		if !strings.HasPrefix(p.Name, "@") || len(p.Name) < 2 {
			return inputErrorf("query parameter %q must be named @something, as the query refers to it", p.Name)
		}
		if !json.Valid(p.Value) {
			return inputErrorf("query parameter %s has no valid JSON value: give a JSON value such as 42, \"text\" or [1,2]", p.Name)
		}
	}
	if op.MaxItemCount < -1 {
		return inputErrorf("the page size must be positive (or -1 for the largest page the service serves), not %d", op.MaxItemCount)
	}
	if op.Kind == OpQueryPlan {
		return nil
	}
	targets := 0
	for _, set := range []bool{op.PartitionKey != nil, op.RangeID != "", op.CrossPartition} {
		if set {
			targets++
		}
	}
	if err := checkEPKScope(op); err != nil {
		return err
	}
	switch {
	case targets == 0:
		return inputErrorf("a query page needs a partition key, a partition key range or cross-partition enabled")
	case targets > 1:
		return inputErrorf("a query page goes to one partition key, one partition key range or across partitions, not several of them")
	}
	return nil
}

// buildQueryRequest is the gateway request of a query page or a query plan request:
// POST …/docs with the query as application/query+json, and the headers that say where
// it runs and where the page starts.
func buildQueryRequest(op *Operation) *cosmos.Request {
	body, _ := json.Marshal(op.Query) // validated by prepareQuery: parameters are valid JSON
	req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.ItemsPath(op.Database, op.Container), Header: http.Header{}, Body: body}
	h := req.Header
	h.Set("Content-Type", "application/query+json")
	h.Set(cosmos.HeaderIsQuery, "True")
	if op.Kind == OpQueryPlan {
		h.Set(cosmos.HeaderQueryPlanRequest, "True")
		h.Set(cosmos.HeaderSupportedQueryFeatures, op.QueryFeatures)
		h.Set(cosmos.HeaderQueryVersion, "1.4")
		return req
	}
	req.BodyBuffers = op.BodyBuffers
	switch {
	case op.PartitionKey != nil:
		h.Set(cosmos.HeaderPartitionKey, op.partitionKeyJSON())
	case op.RangeID != "":
		// A page of one range of a cross-partition query says so, as the JS SDK's per-range
		// pages do (@azure/cosmos 4.10 getHeaders, request/request.js, sends it on every
		// request, beside x-ms-documentdb-partitionkeyrangeid).
		h.Set(cosmos.HeaderPartitionKeyRangeID, op.RangeID)
		h.Set(cosmos.HeaderEnableCrossPartition, "True")
		setEPKScope(h, op)
	case op.CrossPartition:
		h.Set(cosmos.HeaderEnableCrossPartition, "True")
	}
	if op.MaxItemCount != 0 {
		h.Set(cosmos.HeaderMaxItemCount, strconv.Itoa(op.MaxItemCount))
	}
	if op.Continuation != "" {
		h.Set(cosmos.HeaderContinuation, op.Continuation)
	}
	if op.Explain {
		h.Set(cosmos.HeaderPopulateQueryMetrics, "true")
		h.Set(cosmos.HeaderPopulateIndexMetrics, "true")
		h.Set(cosmos.HeaderPopulateQueryAdvice, "true")
	}
	return req
}

// rangeGone reports a page sent to one partition key range that answered 410/1002: the
// range split (or merged) and no longer exists. No retry or other region can serve it;
// the query pipeline re-reads the ranges and goes on from the children.
func rangeGone(op *Operation, resp *cosmos.Response) bool {
	return (op.Kind == OpQuery || op.Kind == OpChangeFeed) && op.RangeID != "" && resp != nil &&
		resp.StatusCode == http.StatusGone && resp.SubStatus == cosmos.SubPartitionKeyRangeGone
}

// checkEPKScope validates the feed range narrowing of a query page or change feed poll.
func checkEPKScope(op *Operation) error {
	if op.StartEPK == "" && op.EndEPK == "" {
		return nil
	}
	switch {
	case op.RangeID == "":
		return inputErrorf("an effective partition key range narrows a request to one partition key range: name the range too")
	case op.EndEPK == "":
		return inputErrorf("an effective partition key range needs its end as well as its start")
	case strings.ToUpper(op.StartEPK) >= strings.ToUpper(op.EndEPK):
		return inputErrorf("the effective partition key range [%q, %q) is empty", op.StartEPK, op.EndEPK)
	}
	return nil
}

// setEPKScope narrows a request addressed to op.RangeID to [op.StartEPK, op.EndEPK).
func setEPKScope(h http.Header, op *Operation) {
	if op.EndEPK == "" {
		return
	}
	h.Set(cosmos.HeaderStartEPK, op.StartEPK)
	h.Set(cosmos.HeaderEndEPK, op.EndEPK)
	h.Set(cosmos.HeaderReadKeyType, cosmos.ReadKeyTypeEPKRange)
}
