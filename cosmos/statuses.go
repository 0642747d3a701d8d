package cosmos

import (
	"fmt"
	"net/http"
)

// StatusRow is one answer the service gives, in words: what happened and what to do. Sub
// -1 stands for every substatus of Code that has no row of its own.
type StatusRow struct {
	Code    int
	Sub     int
	Meaning string
	Do      string
}

// Statuses is the one table of the service's statuses and substatuses cosmosctl puts
// into words: diagnostics (status_text), errors and `cosmosctl help statuses` read it.
// The codes are the service's (learn.microsoft.com/rest/api/cosmos-db/http-status-codes-
// for-cosmosdb; the substatus enums of the .NET SDK, Microsoft.Azure.Cosmos/src/
// Resource/CosmosExceptions/Http/*/*SubStatusCode.cs; 403/1014 and 403/5301 from the
// troubleshooting pages for 403 and RBAC); the words are ours. A pair not listed takes
// its status's row (Sub -1).
var Statuses = []StatusRow{
	{304, -1, "not modified: nothing changed since the continuation or etag sent", "nothing to do: the change feed is caught up"},
	{400, -1, "bad request: the service refused the request as malformed", "read the message; fix the request"},
	{400, 1001, "the partition key sent does not match the one in the document", "send the document's own partition key value"},
	{400, 1004, "this cross-partition query cannot be served by one partition", "run it as a cross-partition query (cosmosctl does so unless --partition-key is given)"},
	{401, -1, "unauthorized: the key or token is wrong, or the request's date is too far from the service's clock", "check the key (cosmosctl config show) and the machine's clock"},
	{403, -1, "forbidden: the request was refused by policy", "read the message: firewall, network rules or a quota"},
	{403, 3, "this region does not take writes: the write region moved", "cosmosctl refreshes the account and writes to the new write region"},
	{403, 1005, "a provisioning limit of the account was reached", "raise the limit or delete unused resources"},
	{403, 1008, "the account is not found in this region (being removed or moved)", "cosmosctl moves to another region; check the account's regions"},
	{403, 1014, "the logical partition reached its 20 GB limit", "spread the key: use a hierarchical or more selective partition key"},
	{403, 5301, "the identity has no data-plane role for this request", "grant a Cosmos DB data-plane role to the identity (az cosmosdb sql role assignment create)"},
	{404, -1, "not found: the item, container or database does not exist", "check the id, the partition key value and the names"},
	{404, 1002, "this region has not caught up with your session yet", "cosmosctl retries, then reads from the write region"},
	{404, 1003, "the database or container holding the resource does not exist", "check the database and container names"},
	{404, 1013, "the container is still being created", "retry shortly"},
	{405, -1, "method not allowed on this resource", "the operation is not supported here (e.g. a write to a read-only resource)"},
	{408, -1, "the request timed out in the service", "retried; if it persists, the partition or the region is overloaded"},
	{409, -1, "conflict: an item with this id already exists in the partition", "use upsert or replace, or another id"},
	{410, -1, "gone: the replica or partition that was addressed moved", "cosmosctl refreshes its routing and retries"},
	{410, 1000, "the container was recreated under the same name", "cosmosctl refreshes its cache of the container and retries"},
	{410, 1002, "the partition key range is gone: it split or merged", "cosmosctl reads the new ranges and goes on from them"},
	{410, 1007, "the partition is completing a split", "cosmosctl retries after refreshing its routing"},
	{410, 1008, "the partition is completing a migration", "cosmosctl retries after refreshing its routing"},
	{412, -1, "precondition failed: the item changed since the etag you sent", "read it again and retry with the new etag"},
	{413, -1, "too large: the item or request exceeds the service's limit (2 MB per item)", "make the item smaller"},
	{424, -1, "failed dependency: another operation of the batch failed", "see the batch operation that failed"},
	{429, -1, "too many requests: the request rate exceeded what was provisioned", "cosmosctl waits the retry-after and retries; raise throughput or spread the load"},
	{429, 3200, "the partition's RU/s budget was used up", "hot partition or too few RU/s: cosmosctl waits the retry-after; cosmosctl skew --sample tells which"},
	{449, -1, "retry with: a concurrent update of the same item conflicted inside the service", "cosmosctl retries"},
	{500, -1, "internal server error in the service", "retried where safe; report the activity id to Azure support if it persists"},
	{503, -1, "service unavailable: the partition or region cannot serve now", "cosmosctl retries and moves to another region"},
}

// StatusWords are a status and substatus in words (what happened), "" for a success.
func StatusWords(code, sub int) string {
	if s, ok := LookupStatus(code, sub); ok {
		return s.Meaning
	}
	if code >= 200 && code < 300 || code == 0 {
		return ""
	}
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%s (no words for this status in cosmosctl's table)", t)
	}
	return "a status cosmosctl has no words for"
}

// LookupStatus is the row of Statuses for code and sub: its own, else its status's.
func LookupStatus(code, sub int) (StatusRow, bool) {
	var general StatusRow
	found := false
	for _, s := range Statuses {
		if s.Code != code {
			continue
		}
		if s.Sub == sub {
			return s, true
		}
		if s.Sub == -1 {
			general, found = s, true
		}
	}
	return general, found
}
