#!/usr/bin/python3
"""The official Python SDK (Debian's python3-azure-cosmos, 3.1.1) against cosmosctl's
emulator. emulator/sdkcompat_python_test.go starts a fresh emulator and runs this file
with /usr/bin/python3; COSMOS_ENDPOINT and COSMOS_KEY name it.

The SDK keeps response headers in a plain dict and looks them up by their lower-case
names, so each check here also shows that the emulator sends lower-case header names:
with canonical names (X-Ms-Continuation) paging stops at the first page, a 429 is
retried without waiting, and no session token is kept.

Faults and replication lag are set through the emulator's control API, signed with the
account key like any other request. Prints one line per check; exits 1 when any fails.

Not here, for this SDK's own limitations (the JS suite, sdkcompat/js, checks both):

- A 503 in the first preferred region failing over to the next. SDK 3.1.1 never retries
  a 503: retry_utility._Execute sends it to _DefaultRetryPolicy, which retries only
  connection errors (errno codes), and on the same endpoint. A read with
  PreferredLocations ['East US', 'West US'] and a 503 fault on East US raises the 503
  after one request.
- A write after a failover (403/3). _EndpointDiscoveryRetryPolicy marks the old write
  endpoint unavailable and sets refresh_needed; the next attempt's
  refresh_endpoint_list(None) reads the database account while refresh_needed is still
  True, and that read's own _Request calls refresh_endpoint_list(None) again (the lock
  is an RLock): RecursionError, whatever the server answers
  (global_endpoint_manager._refresh_endpoint_list_private clears refresh_needed only
  after the account read returns).
"""

import os
import sys
import time
import traceback

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.documents as documents
import azure.cosmos.errors as errors

import emulator_control

ENDPOINT = os.environ.get("COSMOS_ENDPOINT", "").rstrip("/")
KEY = os.environ.get("COSMOS_KEY", "")
if not ENDPOINT or not KEY:
    sys.exit("set COSMOS_ENDPOINT and COSMOS_KEY (emulator/sdkcompat_python_test.go does)")


# --- the emulator's control API ------------------------------------------------------

control = emulator_control.control_api(ENDPOINT, KEY)


def add_fault(rule):
    return control("POST", "/faults", rule)


def clear_faults():
    control("DELETE", "/faults")


# --- the checks ----------------------------------------------------------------------

client = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY})
DB_ID = "sdkcompat-py-%d" % os.getpid()
db = client.CreateDatabase({"id": DB_ID})
coll = client.CreateContainer("dbs/" + DB_ID, {"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}})
COLL = "dbs/%s/colls/items" % DB_ID


def doc_link(doc_id):
    return COLL + "/docs/" + doc_id


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def test_crud():
    created = client.CreateItem(COLL, {"id": "a", "pk": "p", "n": 1})
    check(created["n"] == 1 and created["_etag"], "create echoes the document with an _etag")
    read = client.ReadItem(doc_link("a"), {"partitionKey": "p"})
    check(read["n"] == 1, "read returns the created document")
    check(client.last_response_headers.get("etag") == read["_etag"], "the etag header equals _etag")
    read["n"] = 2
    replaced = client.ReplaceItem(doc_link("a"), read, {"partitionKey": "p"})
    check(replaced["n"] == 2, "replace returns the new version")
    try:
        client.ReplaceItem(doc_link("a"), read, {"partitionKey": "p",
                                                 "accessCondition": {"type": "IfMatch", "condition": read["_etag"]}})
        raise AssertionError("replace with a stale If-Match succeeded")
    except errors.HTTPFailure as e:
        check(e.status_code == 412, "stale If-Match is 412, got %d" % e.status_code)
    upserted = client.UpsertItem(COLL, {"id": "a", "pk": "p", "n": 3})
    check(upserted["n"] == 3, "upsert replaces")
    client.DeleteItem(doc_link("a"), {"partitionKey": "p"})
    try:
        client.ReadItem(doc_link("a"), {"partitionKey": "p"})
        raise AssertionError("read after delete succeeded")
    except errors.HTTPFailure as e:
        check(e.status_code == 404, "read after delete is 404, got %d" % e.status_code)
        # The SDK reads the substatus from the lower-case header only.
        check(e.sub_status == 0, "a 404 carries x-ms-substatus 0, got %r" % e.sub_status)


def test_paging():
    for i in range(5):
        client.CreateItem(COLL, {"id": "page-%d" % i, "pk": "pages", "i": i})
    it = client.QueryItems(COLL, "SELECT * FROM c WHERE c.pk = 'pages'",
                           {"maxItemCount": 2, "partitionKey": "pages"})
    pages = []
    while True:
        block = it.fetch_next_block()
        if not block:
            break
        pages.append([d["i"] for d in block])
    got = sorted(i for p in pages for i in p)
    check(got == [0, 1, 2, 3, 4], "paging returns every item once, got %r in pages %r" % (got, pages))
    check(len(pages) >= 3 and all(len(p) <= 2 for p in pages),
          "max_item_count 2 over 5 items gives at least 3 pages, got %r" % pages)


def test_throttle():
    client.UpsertItem(COLL, {"id": "t", "pk": "p"})
    add_fault({"operations": ["read"], "effect": "status", "status": 429, "retry_after": "400ms", "count": 1})
    try:
        start = time.monotonic()
        doc = client.ReadItem(doc_link("t"), {"partitionKey": "p"})
        waited = time.monotonic() - start
    finally:
        clear_faults()
    check(doc["id"] == "t", "the read succeeds after the 429")
    check(waited >= 0.38, "the SDK waited x-ms-retry-after-ms (400 ms) before retrying, waited %.3f s" % waited)


def test_session():
    client.UpsertItem(COLL, {"id": "s", "pk": "p"})
    token = client.last_response_headers.get("x-ms-session-token")
    check(token, "a write answers with x-ms-session-token, headers %r" % sorted(client.last_response_headers))
    kept = client.session.get_session_token(doc_link("s"))
    check(kept and kept.split(",")[0].split(":")[0] == token.split(":")[0],
          "the SDK kept the session token %r, it has %r" % (token, kept))
    client.ReadItem(doc_link("s"), {"partitionKey": "p"})
    check(client.last_response_headers.get("x-ms-session-token"), "a read answers with a session token")
    check(client.last_response_headers.get("x-ms-request-charge"), "a read answers with its request charge")



# Each check below that needs its own items uses its own container, so that the checks
# do not see each other's items.
_seq = [0]


def fresh_container(options=None):
    _seq[0] += 1
    cid = "c%d" % _seq[0]
    client.CreateContainer("dbs/" + DB_ID, {"id": cid, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}},
                           options or {})
    return "dbs/%s/colls/%s" % (DB_ID, cid)


# The status code of every HTTP response the SDK receives, in order. The v3 SDK returns
# bodies, never status codes; a requests hook on its session sees them on the wire.
statuses = []


def record_statuses(c):
    c._requests_session.hooks["response"].append(lambda r, *a, **k: statuses.append(r.status_code))


record_statuses(client)


def expect_failure(status, fn, what, sub_status=None):
    try:
        fn()
    except errors.HTTPFailure as e:
        check(e.status_code == status, "%s: want %d, got %d (%s)" % (what, status, e.status_code, e))
        if sub_status is not None:
            check(e.sub_status == sub_status, "%s: want substatus %d, got %r" % (what, sub_status, e.sub_status))
        return e
    raise AssertionError("%s: want %d, it succeeded" % (what, status))


def served_by(c):
    return (c.last_response_headers or {}).get("x-ms-cosmos-emulator-region")


def policy(locations):
    p = documents.ConnectionPolicy()
    p.PreferredLocations = locations
    return p


def test_conditional():
    coll = fresh_container()
    link = coll + "/docs/a"
    created = client.CreateItem(coll, {"id": "a", "pk": "p", "n": 1})
    stale = created["_etag"]
    created["n"] = 2
    del statuses[:]
    current = client.ReplaceItem(link, created, {"partitionKey": "p",
                                                 "accessCondition": {"type": "IfMatch", "condition": stale}})
    check(statuses[-1:] == [200], "replace with the current If-Match is 200, got %r" % statuses)
    check(current["n"] == 2 and current["_etag"] != stale, "the replace made a new version with a new _etag")
    current["n"] = 3
    expect_failure(412, lambda: client.ReplaceItem(link, current, {
        "partitionKey": "p", "accessCondition": {"type": "IfMatch", "condition": stale}}), "replace with a stale If-Match")
    check(client.ReadItem(link, {"partitionKey": "p"})["n"] == 2, "the 412 replace changed nothing")


def test_duplicate_and_delete():
    coll = fresh_container()
    link = coll + "/docs/a"
    client.CreateItem(coll, {"id": "a", "pk": "p"})
    expect_failure(409, lambda: client.CreateItem(coll, {"id": "a", "pk": "p"}), "create of an existing id")
    client.CreateItem(coll, {"id": "a", "pk": "other"})  # the same id in another partition key is another item
    del statuses[:]
    client.DeleteItem(link, {"partitionKey": "p"})
    check(statuses == [204], "delete is 204, got %r" % statuses)
    expect_failure(404, lambda: client.ReadItem(link, {"partitionKey": "p"}), "read after delete")
    check(client.ReadItem(link, {"partitionKey": "other"})["pk"] == "other",
          "the delete left the same id in another partition key")


def test_queries():
    coll = fresh_container()
    for i in range(9):
        client.CreateItem(coll, {"id": "i%d" % i, "pk": "p%d" % (i % 3), "n": i})
    every = list(client.QueryItems(coll, "SELECT * FROM c", {"enableCrossPartitionQuery": True, "maxItemCount": 2}))
    check(sorted(d["id"] for d in every) == ["i%d" % i for i in range(9)],
          "a cross-partition query returns every item once, got %r" % sorted(d["id"] for d in every))
    check(len(set(d["pk"] for d in every)) == 3, "the cross-partition query spans three partition keys")
    some = list(client.QueryItems(coll, {"query": "SELECT * FROM c WHERE c.n >= @n",
                                         "parameters": [{"name": "@n", "value": 6}]},
                                  {"enableCrossPartitionQuery": True}))
    check(sorted(d["id"] for d in some) == ["i6", "i7", "i8"], "a filtered cross-partition query, got %r" % some)
    inside = list(client.QueryItems(coll, "SELECT * FROM c", {"partitionKey": "p1"}))
    check(sorted(d["id"] for d in inside) == ["i1", "i4", "i7"],
          "a query within partition key p1, got %r" % sorted(d["id"] for d in inside))


def test_query_pipeline():
    # SDK 3.1.1 runs ORDER BY, TOP and VALUE aggregates across partitions from the plan the
    # gateway attaches to its 400/1004 refusal (additionalErrorInfo). Its aggregates read
    # the partial's "item" only, so every range here holds items (an empty range's MIN
    # has no "item" and this SDK trips on it).
    coll = fresh_container()
    items = [{"id": "o%02d" % i, "pk": "k%d" % (i % 16), "n": (i * 7) % 40} for i in range(40)]
    for it in items:
        client.CreateItem(coll, it)
    xp = {"enableCrossPartitionQuery": True, "maxItemCount": 3}
    got = [d["id"] for d in client.QueryItems(coll, "SELECT * FROM c ORDER BY c.n DESC", xp)]
    want = [it["id"] for it in sorted(items, key=lambda it: -it["n"])]
    check(got == want, "a cross-partition ORDER BY DESC in pages of 3, got %r" % got)
    got = [d["id"] for d in client.QueryItems(coll, "SELECT TOP 5 c.id FROM c ORDER BY c.n", xp)]
    check(got == [it["id"] for it in sorted(items, key=lambda it: it["n"])][:5], "TOP 5 with ORDER BY, got %r" % got)
    got = list(client.QueryItems(coll, "SELECT VALUE COUNT(1) FROM c", xp))
    check(got == [40], "VALUE COUNT(1) across partitions, got %r" % got)
    got = list(client.QueryItems(coll, "SELECT VALUE SUM(c.n) FROM c", xp))
    check(got == [sum(it["n"] for it in items)], "VALUE SUM across partitions, got %r" % got)
    got = list(client.QueryItems(coll, "SELECT VALUE MAX(c.n) FROM c", xp))
    check(got == [39], "VALUE MAX across partitions, got %r" % got)


def test_databases_and_containers():
    db_id = DB_ID + "-meta"
    created = client.CreateDatabase({"id": db_id})
    try:
        check(created["id"] == db_id and created["_self"], "create database echoes it")
        check(client.ReadDatabase("dbs/" + db_id)["_rid"] == created["_rid"], "read database")
        check(db_id in [d["id"] for d in client.ReadDatabases()], "the database is listed")
        found = list(client.QueryDatabases({"query": "SELECT * FROM r WHERE r.id = @id",
                                            "parameters": [{"name": "@id", "value": db_id}]}))
        check([d["id"] for d in found] == [db_id], "query databases by id, got %r" % found)
        expect_failure(409, lambda: client.CreateDatabase({"id": db_id}), "create of an existing database")
        c = client.CreateContainer("dbs/" + db_id, {"id": "c1", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}})
        client.CreateContainer("dbs/" + db_id, {"id": "c2", "partitionKey": {"paths": ["/k"], "kind": "Hash"}})
        read = client.ReadContainer("dbs/%s/colls/c1" % db_id)
        check(read["_rid"] == c["_rid"] and read["partitionKey"]["paths"] == ["/pk"],
              "read container returns its definition, got %r" % read)
        check(sorted(x["id"] for x in client.ReadContainers("dbs/" + db_id)) == ["c1", "c2"], "both containers are listed")
        found = list(client.QueryContainers("dbs/" + db_id, {"query": "SELECT * FROM r WHERE r.id = @id",
                                                             "parameters": [{"name": "@id", "value": "c2"}]}))
        check([x["id"] for x in found] == ["c2"], "query containers by id, got %r" % found)
        client.DeleteContainer("dbs/%s/colls/c2" % db_id)
        expect_failure(404, lambda: client.ReadContainer("dbs/%s/colls/c2" % db_id), "read of a deleted container")
    finally:
        client.DeleteDatabase("dbs/" + db_id)
    expect_failure(404, lambda: client.ReadDatabase("dbs/" + db_id), "read of a deleted database")


def drain_change_feed(coll, range_id, options):
    """Reads one partition key range's change feed page by page until it has nothing new;
    returns the ids, the pages' sizes and the etag to resume from."""
    opts = dict(options, partitionKeyRangeId=range_id)
    it = client.QueryItemsChangeFeed(coll, opts)
    ids, sizes, etag = [], [], options.get("continuation")
    for _ in range(50):
        block = it.fetch_next_block()
        if not block:
            break
        sizes.append(len(block))
        ids.extend(d["id"] for d in block)
        etag = client.last_response_headers.get("etag")
        check(etag, "a change feed page answers with an etag")
    else:
        raise AssertionError("the change feed did not end after 50 pages")
    return ids, sizes, etag


def test_change_feed():
    coll = fresh_container()
    ranges = [r["id"] for r in client._ReadPartitionKeyRanges(coll)]
    check(ranges, "the container has partition key ranges")
    for i in range(7):
        client.CreateItem(coll, {"id": "c%d" % i, "pk": "p%d" % i})
    client.UpsertItem(coll, {"id": "c0", "pk": "p0", "changed": True})  # one entry per item: its latest version
    seen, resume = [], {}
    for r in ranges:
        ids, sizes, etag = drain_change_feed(coll, r, {"isStartFromBeginning": True, "maxItemCount": 2})
        check(all(n <= 2 for n in sizes), "range %s: pages of at most 2 items, got %r" % (r, sizes))
        check(len(ids) == len(set(ids)), "range %s: each item once, got %r" % (r, ids))
        seen.extend(ids)
        resume[r] = etag
    check(sorted(seen) == ["c%d" % i for i in range(7)],
          "the ranges' feeds from the beginning hold every item once, got %r" % sorted(seen))
    for r in ranges:
        ids, _, _ = drain_change_feed(coll, r, {"continuation": resume[r]})
        check(ids == [], "range %s: nothing new after the drained etag, got %r" % (r, ids))
    client.CreateItem(coll, {"id": "new", "pk": "pnew"})
    client.UpsertItem(coll, {"id": "c3", "pk": "p3", "changed": True})
    after = []
    for r in ranges:
        ids, _, _ = drain_change_feed(coll, r, {"continuation": resume[r]})
        after.extend(ids)
    check(sorted(after) == ["c3", "new"], "resumed from the etags: only the new changes, got %r" % sorted(after))


def container_offer(coll):
    rid = client.ReadContainer(coll)["_rid"]
    offers = [o for o in client.ReadOffers() if o.get("offerResourceId") == rid]
    check(len(offers) == 1, "one offer for the container's _rid %s, got %r" % (rid, offers))
    return client.ReadOffer(offers[0]["_self"])


def test_throughput():
    coll = fresh_container({"offerThroughput": 400})
    offer = container_offer(coll)
    check(offer["content"]["offerThroughput"] == 400, "the offer has the container's 400 RU/s, got %r" % offer)
    found = list(client.QueryOffers("SELECT * FROM root r WHERE r.id = '%s'" % offer["id"]))
    check([o["id"] for o in found] == [offer["id"]], "query offers by id, got %r" % found)
    offer["content"]["offerThroughput"] = 1000
    replaced = client.ReplaceOffer(offer["_self"], offer)
    check(replaced["content"]["offerThroughput"] == 1000, "replace offer returns 1000 RU/s, got %r" % replaced)
    again = container_offer(coll)
    check(again["content"]["offerThroughput"] == 1000, "read again, the offer has 1000 RU/s, got %r" % again)


def test_preferred_locations():
    client.UpsertItem(COLL, {"id": "pl", "pk": "p"})
    west = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY}, policy(["West US"]))
    doc = west.ReadItem(doc_link("pl"), {"partitionKey": "p"})
    check(doc["id"] == "pl", "the read in West US returns the item")
    check(served_by(west) == "West US", "a read with PreferredLocations ['West US'] is served by %r" % served_by(west))
    west.UpsertItem(COLL, {"id": "pl", "pk": "p", "again": True})
    check(served_by(west) == "East US", "a write goes to the write region East US, served by %r" % served_by(west))
    client.ReadItem(doc_link("pl"), {"partitionKey": "p"})
    check(served_by(client) == "East US", "without preferred locations a read goes to East US, served by %r"
          % served_by(client))


def test_session_under_lag():
    coll = fresh_container()
    c = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY}, policy(["West US"]))
    record_statuses(c)
    control("PUT", "/replication", {"lag": "2s"})
    try:
        c.CreateItem(coll, {"id": "lag", "pk": "p", "n": 1})
        check(served_by(c) == "East US", "the write goes to East US, served by %r" % served_by(c))
        del statuses[:]
        doc = c.ReadItem(coll + "/docs/lag", {"partitionKey": "p"})
        check(doc["n"] == 1, "a session read right after the write sees it")
        check(statuses == [404, 200], "West US answers 404/1002 and the SDK retries in the write region, "
                                      "statuses %r" % statuses)
        check(served_by(c) == "East US", "the retried read is served by %r" % served_by(c))
    finally:
        control("PUT", "/replication", {"lag": "0s"})


failed = 0
try:
    for name, fn in [("CRUD", test_crud), ("query paging with continuation", test_paging),
                     ("429 with retry-after", test_throttle), ("session token", test_session),
                     ("conditional replace: If-Match current 200, stale 412", test_conditional),
                     ("409 on duplicate create, delete 204 then read 404", test_duplicate_and_delete),
                     ("cross-partition query and query within a partition key", test_queries),
                     ("cross-partition ORDER BY, TOP and aggregates from the gateway's plan", test_query_pipeline),
                     ("databases and containers: create, read, list, query by id", test_databases_and_containers),
                     ("change feed per partition key range: from the beginning, drain, resume", test_change_feed),
                     ("throughput: read, replace and re-read a container's offer", test_throughput),
                     ("preferred locations route reads to West US", test_preferred_locations),
                     ("session read under replication lag", test_session_under_lag)]:
        try:
            fn()
            print("ok   %s" % name)
        except Exception:
            failed += 1
            print("FAIL %s" % name)
            traceback.print_exc(file=sys.stdout)
finally:
    try:
        client.DeleteDatabase("dbs/" + DB_ID)
    except Exception:
        pass
sys.exit(1 if failed else 0)
