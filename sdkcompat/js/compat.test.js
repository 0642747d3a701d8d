// The official JavaScript SDK (@azure/cosmos, pinned in package-lock.json) against
// cosmosctl's emulator. emulator/sdkcompat_javascript_test.go starts a fresh emulator and runs
// this file with `node --test`; COSMOS_ENDPOINT and COSMOS_KEY name it. Each test uses
// its own container, so that the tests do not see each other's items.
//
// Faults (429, 503, a write region that moved) are set through the emulator's control
// API, signed with the account key like any other request.
//
// Not here: session reads under replication lag. On a single-write account this SDK
// answers a 404/1002 by retrying once, with the session token cleared, in a region it
// chooses without regard to the write region; against a lagging read region that retry
// gets 404/0, from the emulator as from the service (the Go SDK's handling of 1002 is
// tested in emulator/sdkcompat_test.go).

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { BulkOperationType, ChangeFeedStartFrom, CosmosClient, OperationType, PatchOperationType, StatusCodes } from "@azure/cosmos";
import { controlAPI } from "./control.js";

const endpoint = process.env.COSMOS_ENDPOINT;
const key = process.env.COSMOS_KEY;
if (!endpoint || !key) {
  throw new Error("set COSMOS_ENDPOINT and COSMOS_KEY (emulator/sdkcompat_javascript_test.go does)");
}

// --- the emulator's control API -------------------------------------------------------

const control = controlAPI(endpoint, key);
const addFault = (rule) => control("POST", "/faults", rule);
const clearFaults = () => control("DELETE", "/faults");

// --- clients and containers -----------------------------------------------------------

let seq = 0;
const clients = [];
function client(options = {}) {
  const c = new CosmosClient({ endpoint, key, ...options });
  clients.push(c);
  return c;
}
after(() => {
  for (const c of clients) c.dispose();
});

async function freshContainer(c = client(), indexingPolicy = undefined) {
  const { database } = await c.databases.createIfNotExists({ id: "sdkcompat" });
  const { container } = await database.containers.createIfNotExists({
    id: `js-${process.pid}-${++seq}`,
    partitionKey: { paths: ["/pk"] },
    indexingPolicy,
  });
  return container;
}

// The region that served a response, as the emulator names it.
const servedBy = (r) => r.headers["x-ms-cosmos-emulator-region"];

// --- the tests ------------------------------------------------------------------------

test("CRUD and conditional requests", async () => {
  const items = (await freshContainer()).items;
  const { resource: created, statusCode } = await items.create({ id: "a", pk: "p", n: 1 });
  assert.equal(statusCode, 201);
  assert.ok(created._etag);
  const c = items.container;
  const { resource: read } = await c.item("a", "p").read();
  assert.equal(read.n, 1);
  const { resource: replaced } = await c.item("a", "p").replace({ id: "a", pk: "p", n: 2 }, { accessCondition: { type: "IfMatch", condition: read._etag } });
  assert.equal(replaced.n, 2);
  await assert.rejects(
    c.item("a", "p").replace({ id: "a", pk: "p", n: 3 }, { accessCondition: { type: "IfMatch", condition: read._etag } }),
    (e) => e.code === 412,
  );
  const { statusCode: upserted } = await items.upsert({ id: "b", pk: "p" });
  assert.equal(upserted, 201);
  await assert.rejects(items.create({ id: "a", pk: "p" }), (e) => e.code === 409);
  const { statusCode: deleted } = await c.item("a", "p").delete();
  assert.equal(deleted, 204);
  const { statusCode: gone } = await c.item("a", "p").read();
  assert.equal(gone, 404);
});

test("patch", async () => {
  const items = (await freshContainer()).items;
  await items.create({ id: "a", pk: "p", count: 1, tags: [] });
  const c = items.container;
  const { resource } = await c.item("a", "p").patch([
    { op: PatchOperationType.set, path: "/status", value: "shipped" },
    { op: PatchOperationType.incr, path: "/count", value: 2 },
    { op: PatchOperationType.add, path: "/tags/-", value: "x" },
  ]);
  assert.equal(resource.status, "shipped");
  assert.equal(resource.count, 3);
  assert.deepEqual(resource.tags, ["x"]);
});

// Delete by partition key: the SDK's own call (POST …/operations/partitionkeydelete, signed
// for the container), which cosmosctl delete --partition-key-value sends too. The service
// removes the items in the background but hides them from reads and queries at once.
test("delete all items for a partition key", async () => {
  const c = await freshContainer();
  for (let i = 0; i < 5; i++) await c.items.create({ id: `d${i}`, pk: "gone" });
  await c.items.create({ id: "k", pk: "kept" });
  const { statusCode } = await c.deleteAllItemsForPartitionKey("gone");
  assert.equal(statusCode, 200);
  const { statusCode: read } = await c.item("d0", "gone").read();
  assert.equal(read, 404);
  const { resources: left } = await c.items.query("SELECT VALUE c.id FROM c", { partitionKey: "gone" }).fetchAll();
  assert.deepEqual(left, []);
  const { resource: kept } = await c.item("k", "kept").read();
  assert.equal(kept.id, "k");
});

test("paging with continuation and cross-partition queries", async () => {
  const c = await freshContainer();
  for (let i = 0; i < 9; i++) await c.items.create({ id: `i${i}`, pk: `p${i % 3}`, n: i });
  const it = c.items.query("SELECT * FROM c", { maxItemCount: 2 });
  const seen = new Set();
  let pages = 0;
  while (it.hasMoreResults()) {
    const { resources } = await it.fetchNext();
    if (resources.length === 0) continue;
    pages++;
    assert.ok(resources.length <= 2, `a page of ${resources.length} items with maxItemCount 2`);
    for (const r of resources) seen.add(r.id);
  }
  assert.equal(seen.size, 9);
  assert.ok(pages >= 5, `${pages} pages`);
  const { resources: one } = await c.items
    .query({ query: "SELECT * FROM c WHERE c.n = @n", parameters: [{ name: "@n", value: 4 }] })
    .fetchAll();
  assert.deepEqual(one.map((r) => r.id), ["i4"]);
  const { resources: inPartition } = await c.items.query("SELECT * FROM c", { partitionKey: "p1" }).fetchAll();
  assert.deepEqual(inPartition.map((r) => r.id).sort(), ["i1", "i4", "i7"]);
});

test("databases and containers, with their queries", async () => {
  const c = client();
  const id = `jsdb-${process.pid}`;
  await c.databases.createIfNotExists({ id });
  const { resources: dbs } = await c.databases.readAll().fetchAll();
  assert.ok(dbs.some((d) => d.id === id));
  const db = c.database(id);
  await db.containers.createIfNotExists({ id: "c1", partitionKey: { paths: ["/pk"] } });
  const { resource: def } = await db.container("c1").read();
  assert.deepEqual(def.partitionKey.paths, ["/pk"]);
  const { resources: colls } = await db.containers.readAll().fetchAll();
  assert.ok(colls.some((x) => x.id === "c1"));
  await db.container("c1").delete();
  await db.delete();
});

test("preferred regions route reads", async () => {
  const seed = await freshContainer();
  await seed.items.create({ id: "a", pk: "p" });
  const west = client({ connectionPolicy: { preferredLocations: ["West US"] } });
  const c = west.database(seed.database.id).container(seed.id);
  const r = await c.item("a", "p").read();
  assert.equal(r.statusCode, 200);
  assert.equal(servedBy(r), "West US");
});

test("429 is retried after retry-after", async () => {
  const seed = await freshContainer();
  await seed.items.create({ id: "a", pk: "p" });
  await addFault({ region: "East US", operations: ["read"], effect: "status", status: 429, retry_after: "50ms", count: 2 });
  try {
    const start = Date.now();
    const r = await seed.item("a", "p").read();
    assert.equal(r.statusCode, 200);
    assert.ok(Date.now() - start >= 90, "the SDK waited the two retry-afters");
  } finally {
    await clearFaults();
  }
});

test("503 in the first preferred region fails over to the next", async () => {
  const seed = await freshContainer();
  await seed.items.create({ id: "a", pk: "p" });
  const c2 = client({ connectionPolicy: { preferredLocations: ["East US", "West US"] } });
  const c = c2.database(seed.database.id).container(seed.id);
  await c.item("a", "p").read(); // learn the account first
  await addFault({ region: "East US", operations: ["read"], effect: "status", status: 503 });
  try {
    const r = await c.item("a", "p").read();
    assert.equal(r.statusCode, 200);
    assert.equal(servedBy(r), "West US");
  } finally {
    await clearFaults();
  }
});

test("403/3 after a failover re-reads the account and writes to the new write region", async () => {
  const c = await freshContainer();
  await c.items.create({ id: "before", pk: "p" });
  await control("POST", "/failover", { region: "West US" });
  try {
    const r = await c.items.create({ id: "after", pk: "p" });
    assert.equal(r.statusCode, 201);
    assert.equal(servedBy(r), "West US");
  } finally {
    await control("POST", "/failover", { region: "East US" });
  }
});

test("excluded regions skip a region per request", async () => {
  const seed = await freshContainer();
  await seed.items.create({ id: "a", pk: "p" });
  const c2 = client({ connectionPolicy: { preferredLocations: ["East US", "West US", "North Europe"] } });
  const c = c2.database(seed.database.id).container(seed.id);
  const r = await c.item("a", "p").read({ excludedLocations: ["East US", "West US"] });
  assert.equal(r.statusCode, 200);
  assert.equal(servedBy(r), "North Europe");
});

// Drains a change feed iterator until it reports no new changes (304), returning the
// ids seen and the continuation to resume from.
async function drain(iterator) {
  const ids = [];
  let continuation;
  for (let i = 0; i < 50 && iterator.hasMoreResults; i++) {
    const page = await iterator.readNext();
    continuation = page.continuationToken;
    if (page.statusCode === StatusCodes.NotModified) break;
    for (const r of page.result) ids.push(r.id);
  }
  return { ids, continuation };
}

test("change feed: from the beginning, 304 when nothing is new, resume, from now", async () => {
  const c = await freshContainer();
  for (let i = 0; i < 5; i++) await c.items.create({ id: `c${i}`, pk: `p${i % 2}` });
  await c.items.upsert({ id: "c0", pk: "p0", changed: true }); // one entry per item: its latest version
  const first = await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 2 }));
  assert.deepEqual([...first.ids].sort(), ["c0", "c1", "c2", "c3", "c4"]);
  assert.ok(first.continuation, "a continuation to resume from");
  await c.items.create({ id: "c5", pk: "p1" });
  const resumed = await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(first.continuation) }));
  assert.deepEqual(resumed.ids, ["c5"]);
  const now = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now() });
  const nothing = await drain(now);
  assert.deepEqual(nothing.ids, []);
  await c.items.create({ id: "c6", pk: "p0" });
  const later = await drain(now);
  assert.deepEqual(later.ids, ["c6"]);
  const byKey = await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("p1") }));
  assert.deepEqual([...byKey.ids].sort(), ["c1", "c3", "c5"]);
});

test("transactional batch: all or nothing within a partition key", async () => {
  const c = await freshContainer();
  const ok = await c.items.batch(
    [
      { operationType: OperationType.Create, resourceBody: { id: "b1", pk: "p" } },
      { operationType: OperationType.Upsert, resourceBody: { id: "b2", pk: "p" } },
      { operationType: OperationType.Read, id: "b1" },
    ],
    "p",
  );
  assert.equal(ok.code, 200);
  assert.deepEqual(ok.result.map((r) => r.statusCode), [201, 201, 200]);
  const failed = await c.items.batch(
    [
      { operationType: OperationType.Create, resourceBody: { id: "b3", pk: "p" } },
      { operationType: OperationType.Create, resourceBody: { id: "b1", pk: "p" } }, // 409
    ],
    "p",
  );
  assert.equal(failed.code, 207);
  assert.deepEqual(failed.result.map((r) => r.statusCode), [424, 409]);
  const { statusCode } = await c.item("b3", "p").read();
  assert.equal(statusCode, 404, "nothing of a failed batch is applied");
});

test("bulk: per-operation results across partitions", async () => {
  const c = await freshContainer();
  const ops = [];
  for (let i = 0; i < 12; i++) ops.push({ operationType: BulkOperationType.Create, partitionKey: `p${i}`, resourceBody: { id: `k${i}`, pk: `p${i}` } });
  ops.push({ operationType: BulkOperationType.Create, partitionKey: "p0", resourceBody: { id: "k0", pk: "p0" } }); // 409
  const results = await c.items.executeBulkOperations(ops);
  assert.equal(results.length, 13);
  const codes = results.map((r) => r.response?.statusCode ?? r.error?.code);
  assert.equal(codes.filter((x) => x === 201).length, 12, JSON.stringify(codes));
  assert.equal(codes[12], 409);
});

test("throughput: read and replace a container's offer", async () => {
  const c = client();
  const { database } = await c.databases.createIfNotExists({ id: "sdkcompat" });
  const { container } = await database.containers.createIfNotExists({ id: `js-tp-${process.pid}`, partitionKey: { paths: ["/pk"] }, throughput: 400 });
  const { resource: offer } = await container.readOffer();
  assert.equal(offer.content.offerThroughput, 400);
  offer.content.offerThroughput = 1000;
  const { resource: replaced } = await c.offer(offer.id).replace(offer);
  assert.equal(replaced.content.offerThroughput, 1000);
  const { resource: again } = await container.readOffer();
  assert.equal(again.content.offerThroughput, 1000);
});

// --- queries through the SDK's query-plan pipeline ---------------------------------------

// Items spread over the four ranges by pk; every property the queries sort on is present
// with one type (the SDK refuses to merge ranges whose ORDER BY values differ in type).
const QUERY_ITEMS = 300;
function queryItem(i) {
  const item = {
    id: `q${String(i).padStart(3, "0")}`,
    pk: `p${i % 17}`,
    n: i,
    f: (i % 7) * 1.5,
    rank: i % 10,
    cat: ["red", "green", "blue"][i % 3],
    grp: `g${i % 5}`,
    name: `name-${(i * 7) % QUERY_ITEMS}`,
    tags: [`t${i % 4}`, `t${i % 6}`],
  };
  if (i % 2 === 0) item.opt = i / 2;
  return item;
}

const byKey = (...keys) => (a, b) => {
  for (const [k, desc] of keys) {
    const x = a[k];
    const y = b[k];
    if (x !== y) return (x < y ? -1 : 1) * (desc ? -1 : 1);
  }
  return 0;
};
const ids = (rows) => rows.map((r) => r.id);
const sortedIds = (rows) => ids(rows).sort();
const close = (a, b) => Math.abs(a - b) < 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

async function fetchPaged(container, querySpec, options) {
  const it = container.items.query(querySpec, options);
  const rows = [];
  let pages = 0;
  while (it.hasMoreResults()) {
    const { resources } = await it.fetchNext();
    if (!resources || resources.length === 0) continue;
    pages++;
    assert.ok(resources.length <= options.maxItemCount, `a page of ${resources.length} with maxItemCount ${options.maxItemCount}`);
    rows.push(...resources);
  }
  return { rows, pages };
}

// The composite indexes the queries below sort by: an ORDER BY of two or more paths needs
// one of the same paths in the same sequence (every direction the same or every one the
// opposite), as on the service.
const asc = (path) => ({ path, order: "ascending" });
const desc = (path) => ({ path, order: "descending" });
const queryIndexing = {
  indexingMode: "consistent",
  includedPaths: [{ path: "/*" }],
  excludedPaths: [{ path: '/"_etag"/?' }],
  compositeIndexes: [
    [asc("/rank"), desc("/n")],
    [desc("/name"), asc("/id")],
    [desc("/f"), asc("/n")],
    [asc("/cat"), asc("/rank")],
    [asc("/rank"), asc("/n")],
  ],
};

test("queries: every supported form across four ranges, as the SDK's pipeline runs them", async () => {
  const c = await freshContainer(client(), queryIndexing);
  const items = [];
  for (let i = 0; i < QUERY_ITEMS; i++) items.push(queryItem(i));
  const ops = items.map((it) => ({ operationType: BulkOperationType.Create, partitionKey: it.pk, resourceBody: it }));
  const created = await c.items.executeBulkOperations(ops);
  assert.equal(created.filter((r) => r.response?.statusCode === 201).length, QUERY_ITEMS);
  const { resources: ranges } = await c.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, 4, "the container has four partition key ranges");

  const all = async (query, options = {}) => (await c.items.query(query, options).fetchAll()).resources;

  // ORDER BY: one item, both directions, several items, with a filter and parameters.
  assert.deepEqual(ids(await all("SELECT * FROM c ORDER BY c.n")), ids([...items].sort(byKey(["n"]))));
  assert.deepEqual(ids(await all("SELECT * FROM c ORDER BY c.n DESC")), ids([...items].sort(byKey(["n", true]))));
  assert.deepEqual(
    ids(await all("SELECT c.id, c.rank FROM c ORDER BY c.rank ASC, c.n DESC")),
    ids([...items].sort(byKey(["rank"], ["n", true]))),
  );
  assert.deepEqual(
    ids(await all("SELECT c.id FROM c ORDER BY c.name DESC, c.id")),
    ids([...items].sort(byKey(["name", true], ["id"]))),
  );
  const spec = {
    query: "SELECT * FROM c WHERE c.n >= @lo AND c.cat = @cat ORDER BY c.f DESC, c.n",
    parameters: [
      { name: "@lo", value: 40 },
      { name: "@cat", value: "green" },
    ],
  };
  assert.deepEqual(ids(await all(spec)), ids(items.filter((i) => i.n >= 40 && i.cat === "green").sort(byKey(["f", true], ["n"]))));
  assert.deepEqual(await all("SELECT VALUE c.name FROM c ORDER BY c.n"), [...items].sort(byKey(["n"])).map((i) => i.name));

  // TOP, OFFSET … LIMIT, with and without ORDER BY.
  assert.deepEqual(ids(await all("SELECT TOP 10 c.id FROM c ORDER BY c.name")), ids([...items].sort(byKey(["name"])).slice(0, 10)));
  const top7 = await all("SELECT TOP 7 * FROM c WHERE c.cat = 'red'");
  assert.equal(top7.length, 7);
  assert.equal(new Set(ids(top7)).size, 7);
  assert.ok(top7.every((r) => r.cat === "red"));
  assert.deepEqual(ids(await all("SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 10")), ids(items.slice(5, 15)));
  const offset = await all("SELECT * FROM c WHERE c.rank = 3 OFFSET 4 LIMIT 6");
  assert.equal(offset.length, 6);
  assert.ok(offset.every((r) => r.rank === 3));

  // DISTINCT, unordered and ordered.
  assert.deepEqual((await all("SELECT DISTINCT VALUE c.cat FROM c")).sort(), ["blue", "green", "red"]);
  assert.deepEqual(
    (await all("SELECT DISTINCT c.grp FROM c")).map((r) => r.grp).sort(),
    ["g0", "g1", "g2", "g3", "g4"],
  );
  // (Not over c.rank: this SDK's ordered DISTINCT drops falsy values such as 0.)
  assert.deepEqual(await all("SELECT DISTINCT VALUE c.grp FROM c ORDER BY c.grp DESC"), ["g4", "g3", "g2", "g1", "g0"]);
  assert.deepEqual(
    await all("SELECT DISTINCT c.cat, c.rank FROM c WHERE c.rank < 2 ORDER BY c.cat, c.rank"),
    ["blue", "green", "red"].flatMap((cat) => [0, 1].map((rank) => ({ cat, rank }))),
  );

  // VALUE aggregates.
  const ns = items.map((i) => i.n);
  assert.deepEqual(await all("SELECT VALUE COUNT(1) FROM c"), [QUERY_ITEMS]);
  assert.deepEqual(await all("SELECT VALUE COUNT(c.opt) FROM c"), [QUERY_ITEMS / 2]);
  assert.deepEqual(await all("SELECT VALUE SUM(c.n) FROM c"), [ns.reduce((a, b) => a + b, 0)]);
  assert.deepEqual(await all("SELECT VALUE MIN(c.name) FROM c"), [[...items].map((i) => i.name).sort()[0]]);
  assert.deepEqual(await all("SELECT VALUE MAX(c.n) FROM c WHERE c.cat = 'blue'"), [Math.max(...items.filter((i) => i.cat === "blue").map((i) => i.n))]);
  const [avg] = await all("SELECT VALUE AVG(c.f) FROM c");
  assert.ok(close(avg, items.reduce((a, i) => a + i.f, 0) / QUERY_ITEMS), `AVG ${avg}`);
  assert.deepEqual(await all("SELECT VALUE MIN(c.n) FROM c WHERE c.n > 100000"), [], "MIN over nothing is undefined: no row");

  // Aggregates without VALUE, with aliases and without.
  const blue = items.filter((i) => i.cat === "blue");
  const [agg] = await all("SELECT COUNT(1) AS n, SUM(c.n) AS total, MIN(c.name) AS first, MAX(c.f), AVG(c.n) AS mean FROM c WHERE c.cat = 'blue'");
  assert.equal(agg.n, blue.length);
  assert.equal(agg.total, blue.reduce((a, i) => a + i.n, 0));
  assert.equal(agg.first, blue.map((i) => i.name).sort()[0]);
  assert.equal(agg.$1, Math.max(...blue.map((i) => i.f)));
  assert.ok(close(agg.mean, blue.reduce((a, i) => a + i.n, 0) / blue.length));

  // GROUP BY with aggregates, and VALUE GROUP BY.
  const groups = await all("SELECT c.grp, COUNT(1) AS n, SUM(c.n) AS total, MAX(c.name) AS last FROM c GROUP BY c.grp");
  assert.equal(groups.length, 5);
  for (const g of groups) {
    const members = items.filter((i) => i.grp === g.grp);
    assert.equal(g.n, members.length, `COUNT of ${g.grp}`);
    assert.equal(g.total, members.reduce((a, i) => a + i.n, 0), `SUM of ${g.grp}`);
    assert.equal(g.last, members.map((i) => i.name).sort().at(-1), `MAX of ${g.grp}`);
  }
  const byTwo = await all("SELECT c.cat, c.rank, AVG(c.f) AS f FROM c GROUP BY c.cat, c.rank");
  assert.equal(byTwo.length, 30);
  for (const g of byTwo) {
    const members = items.filter((i) => i.cat === g.cat && i.rank === g.rank);
    assert.ok(close(g.f, members.reduce((a, i) => a + i.f, 0) / members.length), `AVG of ${g.cat}/${g.rank}`);
  }
  assert.deepEqual((await all("SELECT VALUE COUNT(1) FROM c GROUP BY c.cat")).sort(), [100, 100, 100]);
  assert.deepEqual((await all("SELECT VALUE c.grp FROM c GROUP BY c.grp")).sort(), ["g0", "g1", "g2", "g3", "g4"]);

  // Projections, operators and functions, run across ranges directly (no plan needed).
  const projected = await all(
    "SELECT c.id, UPPER(c.cat) AS up, LENGTH(c.name) AS len, c.n * 2 + 1 AS calc, CONCAT(c.cat, '-', c.grp) AS cg, " +
      "c.cat || '/' || c.grp AS cat2, IS_DEFINED(c.opt) AS hasOpt, SUBSTRING(c.name, 0, 6) AS prefix, ARRAY_LENGTH(c.tags) AS nt, " +
      "ROUND(c.f) AS r, c.opt ?? -1 AS optOr, {\"pair\": [c.n, c.rank]} AS obj " +
      "FROM c WHERE STARTSWITH(c.name, 'name-1') AND c.n BETWEEN 10 AND 200 AND c.cat IN ('red', 'blue') AND NOT ARRAY_CONTAINS(c.tags, 't5')",
  );
  const want = items.filter((i) => i.name.startsWith("name-1") && i.n >= 10 && i.n <= 200 && ["red", "blue"].includes(i.cat) && !i.tags.includes("t5"));
  assert.ok(want.length > 5, "the filter keeps some items");
  assert.deepEqual(sortedIds(projected), sortedIds(want));
  for (const p of projected) {
    const i = items.find((x) => x.id === p.id);
    assert.deepEqual(p, {
      id: i.id,
      up: i.cat.toUpperCase(),
      len: i.name.length,
      calc: i.n * 2 + 1,
      cg: `${i.cat}-${i.grp}`,
      cat2: `${i.cat}/${i.grp}`,
      hasOpt: i.opt !== undefined,
      prefix: i.name.slice(0, 6),
      nt: 2,
      r: Math.round(i.f),
      optOr: i.opt ?? -1,
      obj: { pair: [i.n, i.rank] },
    });
  }
  const missing = await all("SELECT c.id, c.opt FROM c WHERE c.n < 4");
  assert.deepEqual(
    missing.sort(byKey(["id"])),
    [{ id: "q000", opt: 0 }, { id: "q001" }, { id: "q002", opt: 1 }, { id: "q003" }],
    "an undefined property is left out of the projection",
  );

  // One partition key: the whole query runs in the partition (no plan pipeline).
  const p3 = items.filter((i) => i.pk === "p3");
  assert.deepEqual(ids(await all("SELECT * FROM c ORDER BY c.n DESC", { partitionKey: "p3" })), ids([...p3].sort(byKey(["n", true]))));
  assert.deepEqual(await all("SELECT VALUE COUNT(1) FROM c", { partitionKey: "p3" }), [p3.length]);
  assert.deepEqual(
    ids(await all("SELECT TOP 3 c.id FROM c ORDER BY c.name", { partitionKey: "p3" })),
    ids([...p3].sort(byKey(["name"])).slice(0, 3)),
  );
  const p3groups = await all("SELECT c.cat, COUNT(1) AS n FROM c GROUP BY c.cat", { partitionKey: "p3" });
  assert.deepEqual(
    p3groups.sort(byKey(["cat"])),
    ["blue", "green", "red"].map((cat) => ({ cat, n: p3.filter((i) => i.cat === cat).length })).filter((g) => g.n > 0),
  );

  // Paging through the pipeline: ORDER BY, DISTINCT and GROUP BY in small pages.
  const paged = await fetchPaged(c, "SELECT c.id, c.n FROM c ORDER BY c.n DESC", { maxItemCount: 7 });
  assert.deepEqual(ids(paged.rows), ids([...items].sort(byKey(["n", true]))));
  assert.ok(paged.pages >= QUERY_ITEMS / 7, `${paged.pages} pages`);
  const pagedTop = await fetchPaged(c, "SELECT TOP 25 c.id FROM c ORDER BY c.rank, c.n", { maxItemCount: 4 });
  assert.deepEqual(ids(pagedTop.rows), ids([...items].sort(byKey(["rank"], ["n"])).slice(0, 25)));
  const pagedOffset = await fetchPaged(c, "SELECT c.id FROM c ORDER BY c.n OFFSET 33 LIMIT 20", { maxItemCount: 6 });
  assert.deepEqual(ids(pagedOffset.rows), ids(items.slice(33, 53)));
  const pagedDistinct = await fetchPaged(c, "SELECT DISTINCT VALUE c.name FROM c WHERE c.rank < 5", { maxItemCount: 9 });
  assert.deepEqual(pagedDistinct.rows.sort(), items.filter((i) => i.rank < 5).map((i) => i.name).sort());
  const pagedSimple = await fetchPaged(c, "SELECT c.id FROM c WHERE c.f > 3", { maxItemCount: 11 });
  assert.deepEqual(sortedIds(pagedSimple.rows), sortedIds(items.filter((i) => i.f > 3)));
});

test("queries: index metrics as this SDK asks for them (V2), and an ORDER BY the index cannot serve", async () => {
  const c = await freshContainer();
  await c.items.create({ id: "1", pk: "p", name: "Tim", age: 16 });
  await c.items.create({ id: "2", pk: "p", name: "Ann", age: 30 });
  const asked = await c.items
    .query("SELECT * FROM c WHERE c.name = 'Tim' AND c.age > 12", { partitionKey: "p", populateIndexMetrics: true })
    .fetchAll();
  assert.deepEqual(ids(asked.resources), ["1"]);
  const metrics = JSON.parse(asked.indexMetrics);
  assert.deepEqual(metrics.UtilizedIndexes.SingleIndexes.map((i) => i.IndexSpec), ["/pk/?", "/name/?", "/age/?"]);
  assert.deepEqual(metrics.PotentialIndexes.CompositeIndexes.map((i) => i.IndexSpecs), [["/name ASC", "/age ASC"]]);
  const unasked = await c.items.query("SELECT * FROM c WHERE c.age > 12", { partitionKey: "p" }).fetchAll();
  assert.equal(unasked.headers["x-ms-cosmos-index-utilization"], undefined);
  await assert.rejects(c.items.query("SELECT * FROM c ORDER BY c.name, c.age").fetchAll(), (e) => {
    assert.equal(e.code, 400);
    assert.match(JSON.stringify(e.body ?? e.message), /does not have a corresponding composite index/);
    return true;
  });
});
