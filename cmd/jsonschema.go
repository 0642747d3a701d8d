package cmd

import (
	"encoding/json"

	"github.com/cosmosctl/cosmosctl/internal/progress"
	"github.com/cosmosctl/cosmosctl/output"
)

// JSONOutput is the JSON one command prints: the Go type of what it writes, from which
// `go generate` writes its JSON schema to docs/json/NAME.schema.json (internal/gen), and
// which a test holds each command's real output to (jsonschema_test.go).
type JSONOutput struct {
	// Name is the schema's file name without .schema.json: the command path after
	// "cosmosctl", words joined by "-" ("db-ls", "emulator-fault-list"), and a suffix
	// for a second output of one command ("query.ndjson", "import.progress").
	Name string
	// Command is how to get the output: "cosmosctl query … -o json".
	Command string
	// Lines says the output is NDJSON: Values are what one line can be.
	Lines bool
	// Stderr says the output goes to stderr (--progress json), stdout being the data.
	Stderr bool
	// Values are zero values of the Go types the output is made of: one for an object
	// (or an array), several for NDJSON whose lines are of several kinds.
	Values []any
	// Description says what the output is, for the schema's description.
	Description string
}

// anyItem stands for an item of the container, whatever its shape: query's and
// changes' NDJSON lines, export's.
type anyItem = json.RawMessage

// JSONOutputs lists the JSON of every command that prints any. A test checks that every
// command with -o json is here.
func JSONOutputs() []JSONOutput {
	result := []any{output.ResultObject{}}
	itemDesc := func(verb string) string {
		return "cosmosctl " + verb + " -o json: the status, request charge, activity id, etag and session token, the item, the error, and the diagnostics of every attempt."
	}
	return []JSONOutput{
		{Name: "read", Command: "cosmosctl read ID --pk KEY -o json", Values: result, Description: itemDesc("read")},
		{Name: "create", Command: "cosmosctl create -f FILE -o json", Values: result, Description: itemDesc("create")},
		{Name: "upsert", Command: "cosmosctl upsert -f FILE -o json", Values: result, Description: itemDesc("upsert")},
		{Name: "replace", Command: "cosmosctl replace ID -f FILE -o json", Values: result, Description: itemDesc("replace")},
		{Name: "delete", Command: "cosmosctl delete ID --pk KEY -o json", Values: result, Description: itemDesc("delete") + " The item is null."},
		{Name: "delete.partition", Command: "cosmosctl delete --partition-key-value KEY -o json", Values: []any{partitionDeleteSummary{}},
			Description: "cosmosctl delete --partition-key-value -o json: the partition key, the method (service, query, or count for --dry-run), the items counted or deleted, those already gone, the request charge, and why the service operation was not used."},
		{Name: "patch", Command: "cosmosctl patch ID --pk KEY --op OP -o json", Values: result, Description: itemDesc("patch")},
		{Name: "changes-lag", Command: "cosmosctl changes lag --lease-container NAME -o json", Values: []any{lagReport{}},
			Description: "cosmosctl changes lag -o json: a change feed processor's leases, each with its owner, when it was last renewed, its estimated lag and state (ok, stuck, unowned), and the totals: the lag, the oldest checkpoint, how many are stuck."},
		{Name: "query", Command: "cosmosctl query SQL -o json", Values: []any{output.QueryObject{}},
			Description: "cosmosctl query -o json: the items, whether the query is complete, the continuation to resume from, the totals, and every request (the plan, the ranges' read, each page) with its diagnostics."},
		{Name: "query.ndjson", Command: "cosmosctl query SQL -o ndjson", Lines: true, Values: []any{anyItem{}},
			Description: "cosmosctl query -o ndjson: one item a line, as the service returned it (compact), as pages arrive."},
		{Name: "query.explain", Command: "cosmosctl query SQL --explain -o json", Values: []any{output.ExplainReport{}},
			Description: "cosmosctl query --explain -o json: per partition key range the service's query metrics (request charge, server time, documents retrieved and output, index lookup and document load time), the indexes used and the potential ones, the indexing policy and the proposed one with its diff, and the query advice."},
		{Name: "changes", Command: "cosmosctl changes -o json (or ndjson, or off a terminal)", Lines: true, Values: []any{anyItem{}},
			Description: "cosmosctl changes: one changed item a line, in its latest version with the service's _lsn, as the changes arrive."},
		{Name: "import", Command: "cosmosctl import FILE -o json", Values: []any{output.ImportReport{}},
			Description: "cosmosctl import -o json: the report of the whole import (every run of it, when resumed) and of this run."},
		{Name: "import.progress", Command: "cosmosctl import FILE --progress json 2>progress.ndjson", Lines: true, Stderr: true,
			Values:      []any{progress.Event{}, output.ImportReport{}},
			Description: "cosmosctl import --progress json, on stderr: a progress event a second, then the report (event \"report\")."},
		{Name: "diagnostics", Command: "cosmosctl COMMAND --diagnostics=json 2>diagnostics.ndjson", Lines: true, Stderr: true,
			Values:      []any{diagnosticsEvent{}, pageEvent{}, pollEvent{}, writeEvent{}},
			Description: "--diagnostics=json, on stderr: one event a line for each operation, with every attempt's anatomy (client, server and network time, the partition key range, physical partition, LSN and session token that answered, the status in words, a 429's retry-after and the wait taken): \"diagnostics\" for an item command, \"page\" for each request of a query, \"poll\" for each change feed request, \"write\" for each import write."},
		{Name: "export", Command: "cosmosctl export", Lines: true, Values: []any{anyItem{}},
			Description: "cosmosctl export: one item a line (what --jq makes of it, with --jq), on stdout or into --output-file."},
		{Name: "export.progress", Command: "cosmosctl export --progress json 2>progress.ndjson", Lines: true, Stderr: true,
			Values:      []any{progress.Event{}, exportReport{}},
			Description: "cosmosctl export --progress json, on stderr: a progress event a second, then the report (event \"report\")."},
		{Name: "db-ls", Command: "cosmosctl db ls -o json", Values: []any{[]output.DatabaseInfo{}},
			Description: "cosmosctl db ls -o json: the account's databases and their own throughput."},
		{Name: "db-show", Command: "cosmosctl db show NAME -o json", Values: []any{output.DatabaseInfo{}},
			Description: "cosmosctl db show -o json: one database and its own throughput."},
		{Name: "db-create", Command: "cosmosctl db create NAME -o json", Values: []any{output.DatabaseInfo{}},
			Description: "cosmosctl db create -o json: the database created."},
		{Name: "db-delete", Command: "cosmosctl db delete NAME --yes -o json", Values: []any{deletedJSON{}},
			Description: "cosmosctl db delete -o json: what was deleted."},
		{Name: "container-ls", Command: "cosmosctl container ls -o json", Values: []any{[]output.ContainerInfo{}},
			Description: "cosmosctl container ls -o json: the database's containers (partition_key_ranges and throughput null: ls does not read them)."},
		{Name: "container-show", Command: "cosmosctl container show NAME -o json", Values: []any{output.ContainerInfo{}},
			Description: "cosmosctl container show -o json: one container, its ranges and throughput."},
		{Name: "container-create", Command: "cosmosctl container create NAME --partition-key PATH -o json", Values: []any{output.ContainerInfo{}},
			Description: "cosmosctl container create -o json: the container created."},
		{Name: "container-delete", Command: "cosmosctl container delete NAME --yes -o json", Values: []any{deletedJSON{}},
			Description: "cosmosctl container delete -o json: what was deleted."},
		{Name: "container-set-indexing-policy", Command: "cosmosctl container set-indexing-policy FILE -o json", Values: []any{output.ContainerInfo{}},
			Description: "cosmosctl container set-indexing-policy -o json: the container with its new indexing policy, as the account answered the replace."},
		{Name: "throughput-show", Command: "cosmosctl throughput show NAME -o json", Values: []any{output.ThroughputInfo{}},
			Description: "cosmosctl throughput show -o json: a container's or a database's offer."},
		{Name: "throughput-set", Command: "cosmosctl throughput set NAME --throughput N -o json", Values: []any{output.ThroughputInfo{}},
			Description: "cosmosctl throughput set -o json: the offer after the change."},
		{Name: "locate", Command: "cosmosctl locate --pk KEY -o json", Values: []any{locateReport{}},
			Description: "cosmosctl locate -o json: the effective partition key, the ranges that hold it, and in direct mode their replicas in every read region."},
		{Name: "skew", Command: "cosmosctl skew [--sample DURATION --query SQL | --ids FILE] -o json", Values: []any{skewReport{}},
			Description: "cosmosctl skew -o json: the container's throughput and each range's share of it, each range's statistics (items, size, share of the storage, the largest logical partitions the service lists) and what the sample met on it (request charge, 429s, the busiest key), the sample, and the verdict (hot partition or too few RU) with the range and key it names."},
		{Name: "ranges", Command: "cosmosctl ranges [--shards N] -o json", Lines: true, Values: []any{rangesShard{}},
			Description: "cosmosctl ranges -o json: one line per shard of the plan: its index and count, its effective partition key interval [min, max), its feed range in the .NET SDK's JSON and the Java SDK's base64url form, the physical ranges it lies in, whether it is part of one, the documents and KB it holds by the partition statistics (estimates), and how it was balanced."},
		{Name: "regions", Command: "cosmosctl regions -o json", Values: []any{regionsReport{}},
			Description: "cosmosctl regions -o json: the account's regions, the order reads and writes use them in, a latency to each, and the health remembered of each."},
		{Name: "health", Command: "cosmosctl health -o json", Values: []any{healthReport{}},
			Description: "cosmosctl health -o json: the region health, topology and adaptive hedging samples remembered for the account."},
		{Name: "health-reset", Command: "cosmosctl health reset -o json", Values: []any{healthResetJSON{}},
			Description: "cosmosctl health reset -o json: the state files cleared and what they held."},
		{Name: "probe", Command: "cosmosctl probe -o json", Lines: true, Values: []any{output.ProbeInterval{}, output.ProbeSummary{}},
			Description: "cosmosctl probe -o json (NDJSON): one line a region a second, then the summary."},
		{Name: "hedge-test", Command: "cosmosctl hedge-test -o json", Values: []any{hedgeTestReport{}},
			Description: "cosmosctl hedge-test -o json: each strategy's latency percentiles, extra requests and RU, wins by region, and the recommendation."},
		{Name: "config-show", Command: "cosmosctl config show -o json", Values: []any{configShowJSON{}},
			Description: "cosmosctl config show -o json: every setting a command would use, with where it comes from."},
		{Name: "config-list", Command: "cosmosctl config list -o json", Values: []any{configListJSON{}},
			Description: "cosmosctl config list -o json: the profiles of the config file."},
		{Name: "version", Command: "cosmosctl version -o json", Values: []any{versionJSON{}},
			Description: "cosmosctl version -o json: the version, commit, build date, Go version and platform."},
		{Name: "emulator", Command: "cosmosctl emulator -o json", Values: []any{emulatorServingJSON{}},
			Description: "cosmosctl emulator -o json: one line, once it serves: its endpoints, key, regions and latencies."},
		{Name: "emulator-cert", Command: "cosmosctl emulator cert -o json", Values: []any{emulatorCertJSON{}},
			Description: "cosmosctl emulator cert -o json: the certificate an emulator serving https presents, its fingerprint, and whether it was fetched verified."},
		{Name: "emulator-status", Command: "cosmosctl emulator status -o json", Values: []any{emulatorStatusJSON{}},
			Description: "cosmosctl emulator status -o json: a running emulator's regions, latencies, fault rules and throttling."},
		{Name: "emulator-failover", Command: "cosmosctl emulator failover REGION -o json", Values: []any{emulatorFailoverJSON{}},
			Description: "cosmosctl emulator failover -o json: the write region and the regions after the failover."},
		{Name: "emulator-replication", Command: "cosmosctl emulator replication --lag D -o json", Values: []any{emulatorStatusJSON{}},
			Description: "cosmosctl emulator replication -o json: the emulator's status after the change."},
		{Name: "emulator-enforce-throughput", Command: "cosmosctl emulator enforce-throughput on|off -o json", Values: []any{emulatorStatusJSON{}},
			Description: "cosmosctl emulator enforce-throughput -o json: the emulator's status after the change."},
		{Name: "emulator-latency", Command: "cosmosctl emulator latency -o json", Values: []any{[]latencyJSON{}},
			Description: "cosmosctl emulator latency -o json: the latency settings."},
		{Name: "emulator-fault-add", Command: "cosmosctl emulator fault add … -o json", Values: []any{faultJSON{}},
			Description: "cosmosctl emulator fault add -o json: the rule added."},
		{Name: "emulator-fault-list", Command: "cosmosctl emulator fault list -o json", Values: []any{[]faultJSON{}},
			Description: "cosmosctl emulator fault list -o json: the fault rules and how often each fired."},
		{Name: "emulator-split", Command: "cosmosctl emulator split [RANGE] -o json", Values: []any{emulatorRangeChangeJSON{}},
			Description: "cosmosctl emulator split -o json: the range retired, and the two created in its place with their bounds, parents and documents."},
		{Name: "emulator-merge", Command: "cosmosctl emulator merge RANGE RANGE -o json", Values: []any{emulatorRangeChangeJSON{}},
			Description: "cosmosctl emulator merge -o json: the two ranges retired, and the one created in their place with its bounds, parents and documents."},
		{Name: "failure", Command: "any command with -o json that fails before it prints its own JSON", Values: []any{failureObject{}},
			Description: "A failure under -o json: the error and the exit code (one line under -o ndjson or in any stream). Commands whose JSON has an error member (an item command's, query's, import's) report a failure there instead."},
	}
}
