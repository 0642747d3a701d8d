// JOIN, EXISTS, ARRAY(SELECT …) and SELECT without FROM through the official
// JavaScript SDK (@azure/cosmos 4.10.1, pinned in package-lock.json) against
// cosmosctl's emulator across four ranges. emulator/join_javascript_test.go starts the
// emulator and runs this file with `node --test`; COSMOS_ENDPOINT and COSMOS_KEY name it.
//
// The SDK plans each query with the emulator's query plan and runs its pipeline
// (ORDER BY merge, aggregates, GROUP BY, DISTINCT) over the ranges, so its answers are
// right only if the plans and each range's rows are. They are compared with the same
// queries computed here.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";

const endpoint = process.env.COSMOS_ENDPOINT;
const key = process.env.COSMOS_KEY;
if (!endpoint || !key) {
  throw new Error("set COSMOS_ENDPOINT and COSMOS_KEY (emulator/join_javascript_test.go does)");
}
const client = new CosmosClient({ endpoint, key });
after(() => client.dispose());

let setup;
async function items() {
  if (!setup) {
    setup = (async () => {
      const { database } = await client.databases.createIfNotExists({ id: "joins" });
      const { container } = await database.containers.create({ id: "j", partitionKey: { paths: ["/pk"] } });
      const docs = [];
      for (let i = 0; i < 60; i++) {
        const tags = Array.from({ length: i % 4 }, (_, j) => `t${j}`);
        const doc = { id: `d${String(i).padStart(2, "0")}`, pk: `p${i % 13}`, k: i % 7, tags };
        await container.items.create(doc);
        docs.push(doc);
      }
      return { container, docs };
    })();
  }
  return setup;
}

async function all(container, query, maxItemCount) {
  const { resources } = await container.items.query(query, { maxItemCount }).fetchAll();
  return resources;
}

const bySorted = (rows) => rows.map((r) => JSON.stringify(r)).sort();

for (const maxItemCount of [undefined, 1, 3]) {
  test(`JOIN rows across ranges (pages of ${maxItemCount ?? "default"})`, async () => {
    const { container, docs } = await items();
    const want = docs.flatMap((d) => d.tags.map((t) => ({ id: d.id, tag: t })));
    const got = await all(container, "SELECT c.id, t AS tag FROM c JOIN t IN c.tags", maxItemCount);
    assert.deepEqual(bySorted(got), bySorted(want));
  });

  test(`ORDER BY over a JOIN (pages of ${maxItemCount ?? "default"})`, async () => {
    const { container, docs } = await items();
    const want = [...docs].sort((a, b) => (a.id < b.id ? -1 : 1)).flatMap((d) => d.tags.map((t) => `${d.id}/${t}`));
    const got = await all(container, "SELECT VALUE CONCAT(c.id, '/', t) FROM c JOIN t IN c.tags ORDER BY c.id", maxItemCount);
    assert.deepEqual(got, want);
  });
}

test("aggregates, GROUP BY and DISTINCT over a JOIN", async () => {
  const { container, docs } = await items();
  const tags = docs.flatMap((d) => d.tags);
  assert.deepEqual(await all(container, "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags"), [tags.length]);
  const counts = {};
  for (const t of tags) counts[t] = (counts[t] ?? 0) + 1;
  const groups = await all(container, "SELECT t AS tag, COUNT(1) AS n FROM c JOIN t IN c.tags GROUP BY t");
  assert.deepEqual(bySorted(groups), bySorted(Object.entries(counts).map(([tag, n]) => ({ tag, n }))));
  const distinct = await all(container, "SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags");
  assert.deepEqual([...distinct].sort(), Object.keys(counts).sort());
});

test("EXISTS and ARRAY(SELECT …) across ranges", async () => {
  const { container, docs } = await items();
  const exists = await all(container, "SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 't2')");
  assert.deepEqual([...exists].sort(), docs.filter((d) => d.tags.includes("t2")).map((d) => d.id).sort());
  const arrays = await all(container, "SELECT c.id, ARRAY(SELECT VALUE t FROM t IN c.tags WHERE t != 't0') AS rest FROM c");
  assert.deepEqual(bySorted(arrays), bySorted(docs.map((d) => ({ id: d.id, rest: d.tags.filter((t) => t !== "t0") }))));
});

test("SELECT without FROM answers once across ranges", async () => {
  const { container } = await items();
  assert.deepEqual(await all(container, "SELECT 1 AS a, 2 AS b"), [{ a: 1, b: 2 }]);
});
