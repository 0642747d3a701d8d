// Vector search through the official JavaScript SDK (@azure/cosmos 4.10.1, pinned in
// package-lock.json) against cosmosctl's emulator. emulator/vector_sdk_test.go starts a
// fresh emulator (four ranges a container) and runs this file with `node --test`;
// COSMOS_ENDPOINT and COSMOS_KEY name it.
//
// The SDK is the judge of the emulator's query plans for ORDER BY VectorDistance: it
// runs them with its non-streaming ORDER BY pipeline (every range's TOP rows into one
// bounded priority queue), so the ids it returns are right only if the plan's orderBy,
// rewritten query and each range's scores are. They are compared with a brute-force
// computation here, for cosine, dot product and Euclidean.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";

const endpoint = process.env.COSMOS_ENDPOINT;
const key = process.env.COSMOS_KEY;
if (!endpoint || !key) {
  throw new Error("set COSMOS_ENDPOINT and COSMOS_KEY (emulator/vector_sdk_test.go does)");
}

const client = new CosmosClient({ endpoint, key });
after(() => client.dispose());

const DIMS = 5;
const QUERY = [0.3, -0.1, 0.8, 0.2, -0.5];

// A small deterministic generator (mulberry32), so that every run stores the same
// vectors; three decimals, so that JSON carries them exactly.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function vectorContainer() {
  const { database } = await client.databases.createIfNotExists({ id: "vectors" });
  const embedding = (path, distanceFunction) => ({ path, dataType: "float32", distanceFunction, dimensions: DIMS });
  const { container } = await database.containers.create({
    id: "v",
    partitionKey: { paths: ["/pk"] },
    vectorEmbeddingPolicy: {
      vectorEmbeddings: [embedding("/cos", "cosine"), embedding("/dot", "dotproduct"), embedding("/euc", "euclidean")],
    },
  });
  const next = generator(42);
  const docs = [];
  for (let i = 0; i < 150; i++) {
    const v = Array.from({ length: DIMS }, () => Number((next() * 2 - 1).toFixed(3)));
    const doc = { id: `d${String(i).padStart(3, "0")}`, pk: `p${i % 31}`, cos: v, dot: v, euc: v };
    await container.items.create(doc);
    docs.push(doc);
  }
  return { container, docs };
}

const score = {
  cos: (a, b) => {
    let dot = 0, na = 0, nb = 0;
    a.forEach((x, i) => { dot += x * b[i]; na += x * x; nb += b[i] * b[i]; });
    return dot / Math.sqrt(na * nb);
  },
  dot: (a, b) => a.reduce((s, x, i) => s + x * b[i], 0),
  euc: (a, b) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0)),
};

// bruteForce: ids from the most similar to the least (reversed with leastFirst).
function bruteForce(docs, fn, leastFirst = false) {
  const scored = docs.map((d) => ({ id: d.id, s: score[fn](d[fn], QUERY) }));
  const higherFirst = (fn !== "euc") !== leastFirst;
  scored.sort((x, y) => (higherFirst ? y.s - x.s : x.s - y.s));
  return scored;
}

const setup = vectorContainer();
const vd = (fn) => `VectorDistance(c.${fn}, [${QUERY.join(", ")}])`;

for (const fn of ["cos", "dot", "euc"]) {
  test(`ORDER BY VectorDistance across ranges, ${fn}: the brute-force TOP 10, most similar first`, async () => {
    const { container, docs } = await setup;
    const { resources } = await container.items
      .query(`SELECT TOP 10 c.id, ${vd(fn)} AS s FROM c ORDER BY ${vd(fn)}`)
      .fetchAll();
    const want = bruteForce(docs, fn).slice(0, 10);
    assert.deepEqual(resources.map((r) => r.id), want.map((w) => w.id));
    resources.forEach((r, i) => assert.ok(Math.abs(r.s - want[i].s) < 1e-9, `${r.id}: ${r.s} vs ${want[i].s}`));
  });
}

test("ORDER BY VectorDistance DESC, OFFSET … LIMIT, and a distanceFunction override", async () => {
  const { container, docs } = await setup;
  let { resources } = await container.items
    .query(`SELECT TOP 7 c.id FROM c ORDER BY ${vd("cos")} DESC`)
    .fetchAll();
  assert.deepEqual(resources.map((r) => r.id), bruteForce(docs, "cos", true).slice(0, 7).map((w) => w.id));
  ({ resources } = await container.items
    .query(`SELECT c.id FROM c ORDER BY ${vd("euc")} OFFSET 3 LIMIT 6`)
    .fetchAll());
  assert.deepEqual(resources.map((r) => r.id), bruteForce(docs, "euc").slice(3, 9).map((w) => w.id));
  const over = `VectorDistance(c.cos, [${QUERY.join(", ")}], false, {'distanceFunction': 'dotproduct'})`;
  ({ resources } = await container.items.query(`SELECT TOP 5 c.id FROM c ORDER BY ${over}`).fetchAll());
  assert.deepEqual(resources.map((r) => r.id), bruteForce(docs, "dot").slice(0, 5).map((w) => w.id));
});

test("the plan marks a non-streaming ORDER BY, sorted by similarity", async () => {
  const { container } = await setup;
  const { result } = await container.getQueryPlan(`SELECT TOP 3 c.id FROM c ORDER BY ${vd("cos")}`);
  assert.equal(result.queryInfo.hasNonStreamingOrderBy, true);
  assert.deepEqual(result.queryInfo.orderBy, ["Descending"]);
  assert.equal(result.queryInfo.top, 3);
  const euc = await container.getQueryPlan(`SELECT TOP 3 c.id FROM c ORDER BY ${vd("euc")}`);
  assert.deepEqual(euc.result.queryInfo.orderBy, ["Ascending"]);
});

test("without TOP the SDK refuses a cross-partition vector search; within a partition key the gateway runs it", async () => {
  const { container, docs } = await setup;
  await assert.rejects(
    container.items.query(`SELECT c.id FROM c ORDER BY ${vd("cos")}`).fetchAll(),
    /without TOP or LIMIT/,
  );
  const { resources } = await container.items
    .query(`SELECT c.id FROM c ORDER BY ${vd("euc")}`, { partitionKey: "p4" })
    .fetchAll();
  const want = bruteForce(docs.filter((d) => d.pk === "p4"), "euc").map((w) => w.id);
  assert.deepEqual(resources.map((r) => r.id), want);
});
