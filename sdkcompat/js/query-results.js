// Runs queries through the official JavaScript SDK's query-plan pipeline and prints what
// it returns, so that query/sdkjs_test.go can compare it with cosmosctl's own pipeline
// (query.Run) over the same container.
//
// stdin:  {"database": "...", "container": "...", "queries": [{"query": "...", "parameters": [...]}]}
// stdout: {"results": [{"resources": [...]} or {"error": "..."}]}, one per query, in order.
//
// COSMOS_ENDPOINT and COSMOS_KEY name the account (the emulator). Every query is
// cross-partition: no partition key, so the SDK fetches the plan and runs its pipeline.

import { CosmosClient } from "@azure/cosmos";

const endpoint = process.env.COSMOS_ENDPOINT;
const key = process.env.COSMOS_KEY;
if (!endpoint || !key) {
  console.error("set COSMOS_ENDPOINT and COSMOS_KEY (query/sdkjs_test.go does)");
  process.exit(2);
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { database, container: containerId, queries } = JSON.parse(input);

const client = new CosmosClient({ endpoint, key });
const container = client.database(database).container(containerId);
const results = [];
try {
  for (const { query, parameters } of queries) {
    try {
      const { resources } = await container.items.query({ query, parameters: parameters ?? [] }).fetchAll();
      results.push({ resources });
    } catch (e) {
      results.push({ error: `${e.code ?? ""} ${e.message}`.trim() });
    }
  }
} finally {
  client.dispose();
}
process.stdout.write(JSON.stringify({ results }));
