// The query corpus of e2e/querycorpus through the official JavaScript SDK: every query
// across partitions (the SDK's query-plan pipeline) and within a partition key, each
// answer compared with the oracle's (the documented semantics, computed in Go and
// exported with the queries by e2e/querycorpus's TestQueryCorpusThroughTheJavaScriptSDK,
// which runs this file).
//
// QUERYCORPUS_FILE names the export:
//   {"database", "container", "entries": [{"name", "query", "parameters",
//    "partitionKey" (null: across partitions), "blocks", "offset", "count", "bug"}]}
// blocks are the oracle's rows in order, cut into runs of equal ORDER BY values (one
// block, without ORDER BY): the answer is `count` rows from `offset` on, each position's
// row one of its block's. `bug` names a known bug of the SDK that makes its answer
// differ: the test asserts that it still does, so the list cannot outlive the bugs.
// `refused` says the service answers 400 (a query it runs in one partition only).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { CosmosClient } from "@azure/cosmos";

const endpoint = process.env.COSMOS_ENDPOINT;
const key = process.env.COSMOS_KEY;
const file = process.env.QUERYCORPUS_FILE;
if (!endpoint || !key || !file) {
  throw new Error("set COSMOS_ENDPOINT, COSMOS_KEY and QUERYCORPUS_FILE (e2e/querycorpus does)");
}
const corpus = JSON.parse(readFileSync(file, "utf8"));

const client = new CosmosClient({ endpoint, key });
const container = client.database(corpus.database).container(corpus.container);

const systemProperties = ["_rid", "_self", "_etag", "_ts", "_attachments"];

// canon is a value's canonical text: keys sorted, numbers to 12 significant digits (a
// SUM or AVG added up per range in another order differs in the last bits), system
// properties of stored documents left out.
function canon(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number") {
    const r = Number(v.toPrecision(12));
    return JSON.stringify(r === 0 ? 0 : r);
  }
  if (typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  const stored = "_rid" in v;
  const keys = Object.keys(v)
    .filter((k) => !(stored && systemProperties.includes(k)))
    .sort();
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
}

// mismatch says how items differ from the oracle's answer, or "" when they agree.
function mismatch(entry, items) {
  const positions = [];
  let n = 0;
  entry.blocks.forEach((block, b) => {
    for (let i = 0; i < block.length; i++, n++) {
      if (n >= entry.offset && n < entry.offset + entry.count) positions.push(b);
    }
  });
  if (items.length !== positions.length) {
    return `${items.length} items, want ${positions.length}`;
  }
  const left = entry.blocks.map((block) => {
    const m = new Map();
    for (const v of block) m.set(canon(v), (m.get(canon(v)) ?? 0) + 1);
    return m;
  });
  for (let i = 0; i < items.length; i++) {
    const c = canon(items[i]);
    const m = left[positions[i]];
    if (!m.get(c)) return `item ${i} is ${c}, which is not among the expected ones there`;
    m.set(c, m.get(c) - 1);
  }
  return "";
}

// symptomOf checks that an answer differs the way the entry's known bug makes it: an
// error with the bug's message, or the oracle's answer less its falsy values (0, false,
// null, ""); it returns "" when it does.
function symptomOf(entry, got) {
  const { kind, match } = entry.bug.symptom;
  switch (kind) {
    case "error":
      return got.error && new RegExp(match).test(got.error) ? "" : `want an error matching /${match}/, got ${got.error ?? "items"}`;
    case "items":
      return got.error ? `want items, got the error ${got.error}` : "";
    case "dropsFalsy": {
      if (got.error) return `want items, got the error ${got.error}`;
      const blocks = entry.blocks.map((block) => block.filter((v) => v));
      const count = blocks.reduce((n, b) => n + b.length, 0);
      return mismatch({ ...entry, blocks, offset: 0, count }, got.items);
    }
  }
  return `unknown symptom ${kind}`;
}

async function run(entry) {
  const options = entry.partitionKey === null ? {} : { partitionKey: entry.partitionKey };
  try {
    const { resources } = await container.items
      .query({ query: entry.query, parameters: entry.parameters ?? [] }, options)
      .fetchAll();
    return { items: resources };
  } catch (e) {
    return { error: `${e.code ?? ""} ${e.message}`.trim() };
  }
}

test("the query corpus through the JavaScript SDK", async (t) => {
  try {
    for (const entry of corpus.entries) {
      await t.test(entry.name, async () => {
        const got = await run(entry);
        if (entry.refused) {
          assert.match(got.error ?? "", /^400 /, `want the service's 400 (${entry.refused}), got ${got.error ?? `${got.items.length} items`}`);
          return;
        }
        const diff = got.error ? `the SDK failed: ${got.error}` : mismatch(entry, got.items);
        if (entry.bug) {
          assert.notEqual(diff, "", `the SDK's known bug ${entry.bug.name} no longer shows here (${entry.bug.cause}): take it off the list`);
          assert.equal(symptomOf(entry, got), "", `not the symptom of the SDK's known bug ${entry.bug.name} (${entry.bug.cause}): ${diff}`);
          return;
        }
        assert.equal(diff, "", `${entry.query} ${JSON.stringify(entry.parameters ?? [])}: ${diff}`);
      });
    }
  } finally {
    client.dispose();
  }
});
