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

// Hybrid search: VectorDistance, alone and fused with FullTextScore by RRF, across ranges.
// The container's policy holds the same vectors at /cos (cosine) and /euc (Euclidean);
// the orders are emulator/jsondoc's hand computation (rrf_vector_test.go, hybridCorpus):
// against [2, 1] the cosines of docs 1–4 are 0.894, 0.447, 0.949, 0.707 and the Euclidean
// distances 1.414, 2, 1, 2.236, so the most similar first is 3, 1, 4, 2 under cosine and
// 3, 1, 2, 4 under Euclidean (nearest first); 'dog' ranks doc 2, then 1 and 3 (0), then 4
// (no text). The plan ranks _VectorScore Descending for a similarity and Ascending for a
// distance, and the SDK follows the plan's direction.
const vectorDocs = [
  { id: "1", pk: "p1", t: "the quick brown fox", cos: [1, 0], euc: [1, 0] },
  { id: "2", pk: "p2", t: "The lazy dog sleeps all day", cos: [0, 1], euc: [0, 1] },
  { id: "3", pk: "p3", t: "quick, QUICK fox", cos: [1, 1], euc: [1, 1] },
  { id: "4", pk: "p4", x: "quick", cos: [3, -1], euc: [3, -1] },
];

test("RRF(VectorDistance, FullTextScore) across ranges, cosine and Euclidean", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "sdkcompat" });
  const embedding = (path, distanceFunction) => ({ path, dataType: "float32", dimensions: 2, distanceFunction });
  const { container } = await database.containers.createIfNotExists({
    id: `hybrid-vector-${process.pid}`,
    partitionKey: { paths: ["/pk"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [embedding("/cos", "cosine"), embedding("/euc", "euclidean")] },
  });
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.ok(ranges.length >= 2, `the container must span ranges, has ${ranges.length}`);
  for (const d of vectorDocs) await container.items.upsert(d);
  const cases = [
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK VectorDistance(c.cos, [2, 1])", ["3", "1", "4", "2"]],
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK VectorDistance(c.euc, [2, 1])", ["3", "1", "2", "4"]],
    // doc 1 = 2/62, doc 2 = 1/64 + 1/61, doc 3 = 1/61 + 1/62, doc 4 = 2/63.
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.cos, [2, 1]), FullTextScore(c.t, 'dog'))", ["3", "1", "2", "4"]],
    // doc 1 = 2/62, doc 2 = 1/63 + 1/61, doc 3 = 1/61 + 1/62, doc 4 = 1/64 + 1/63; ranking
    // the distance highest first would give 2, 4, 3, 1.
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'))", ["3", "2", "1", "4"]],
    // [3, 1]: doc 1 = 4/62, doc 2 = 3/64 + 1/61, doc 3 = 3/61 + 1/62, doc 4 = 4/63.
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.cos, [2, 1]), FullTextScore(c.t, 'dog'), [3, 1])", ["3", "1", "4", "2"]],
    // [3, 1]: doc 2 = 3/63 + 1/61, doc 4 = 3/64 + 1/63.
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'), [3, 1])", ["3", "1", "2", "4"]],
    ["SELECT TOP 2 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'dog'), VectorDistance(c.euc, [2, 1]))", ["3", "2"]],
    // A negative weight reverses the distance: docs 4, 2, 1, 3 rank 1 to 4.
    ["SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'), [-1, 1])", ["2", "4", "1", "3"]],
  ];
  for (const optimization of [false, true]) {
    for (const [query, want] of cases) {
      const { resources } = await container.items
        .query(query, { disableHybridSearchQueryPlanOptimization: !optimization })
        .fetchAll();
      assert.deepEqual(ids(resources), want, `${query} (plan optimization ${optimization})`);
    }
  }
});
