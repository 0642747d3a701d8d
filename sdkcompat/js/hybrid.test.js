// ORDER BY RANK across partition key ranges through the official JavaScript SDK's
// hybrid search pipeline (@azure/cosmos 4.10.1, hybridQueryExecutionContext): it asks
// the emulator for the query plan, runs the global statistics query on every range,
// substitutes the totals into the component queries, runs them on every range and fuses
// the results with RRF. emulator/sdkcompat_javascript_test.go runs this file against an
// emulator whose containers have four ranges.
//
// The corpus is emulator/jsondoc's hand-computed one (fulltext_score_test.go): spread
// over four partition keys, the container-wide statistics (N = 4, 13 words, 'quick' in 2
// documents) must give the orders computed there, which per-range statistics would not.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";

const endpoint = process.env.COSMOS_ENDPOINT;
const key = process.env.COSMOS_KEY;
if (!endpoint || !key) {
  throw new Error("set COSMOS_ENDPOINT and COSMOS_KEY (emulator/sdkcompat_javascript_test.go does)");
}
const client = new CosmosClient({ endpoint, key });
after(() => client.dispose());

const docs = [
  { id: "1", pk: "p1", t: "the quick brown fox" },
  { id: "2", pk: "p2", t: "The lazy dog sleeps all day" },
  { id: "3", pk: "p3", t: "quick, QUICK fox" },
  { id: "4", pk: "p4", x: "quick" },
];

async function corpus(id) {
  const { database } = await client.databases.createIfNotExists({ id: "sdkcompat" });
  const { container } = await database.containers.createIfNotExists({ id, partitionKey: { paths: ["/pk"] } });
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.ok(ranges.length >= 2, `the container must span ranges, has ${ranges.length}`);
  for (const d of docs) await container.items.upsert(d);
  return container;
}

const ids = (rows) => rows.map((r) => r.id);

test("ORDER BY RANK FullTextScore and RRF across ranges", async () => {
  const container = await corpus(`hybrid-${process.pid}`);
  const cases = [
    ["SELECT TOP 10 * FROM c ORDER BY RANK FullTextScore(c.t, 'quick')", ["3", "1", "2", "4"]],
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog')", ["3", "2", "1", "4"]],
    ["SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog')", ["3", "2"]],
    ["SELECT c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog') OFFSET 1 LIMIT 2", ["2", "1"]],
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog'))", ["3", "2", "1", "4"]],
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog'), [1, 2])", ["2", "3", "1", "4"]],
    ["SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog'))", ["3", "2", "1"]],
  ];
  for (const optimization of [false, true]) {
    for (const [query, want] of cases) {
      const { resources } = await container.items
        .query(query, { disableHybridSearchQueryPlanOptimization: !optimization })
        .fetchAll();
      assert.deepEqual(ids(resources), want, `${query} (plan optimization ${optimization})`);
    }
  }
  const { resources } = await container.items
    .query({ query: "SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.t, @a, @b)", parameters: [{ name: "@a", value: "quick" }, { name: "@b", value: "dog" }] })
    .fetchAll();
  assert.deepEqual(ids(resources), ["3", "2", "1", "4"], "terms as parameters");
});

test("within a partition key the SDK sends ORDER BY RANK to the gateway as it is", async () => {
  const container = await corpus(`hybrid-pk-${process.pid}`);
  await container.items.upsert({ id: "5", pk: "p1", t: "quick quick quick" });
  const { resources } = await container.items
    .query("SELECT c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick')", { partitionKey: "p1" })
    .fetchAll();
  assert.deepEqual(ids(resources), ["5", "1"]);
});

test("FullTextScore outside ORDER BY RANK is the service's 400", async () => {
  const container = await corpus(`hybrid-bad-${process.pid}`);
  await assert.rejects(
    container.items.query("SELECT c.id, FullTextScore(c.t, 'quick') AS s FROM c").fetchAll(),
    (e) => e.code === 400 && /The FullTextScore function is only allowed in the ORDER BY RANK clause/.test(e.message),
  );
});
