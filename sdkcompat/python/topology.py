#!/usr/bin/python3
"""The official Python SDK (Debian's python3-azure-cosmos, 3.1.1) against emulators whose
containers change shape while they serve. emulator/sdkcompat_python_test.go starts two
and runs this file with /usr/bin/python3:

- COSMOS_ENDPOINT, COSMOS_KEY: six ranges a container and every metadata feed in pages
  of one (--ranges 6 --feed-page-size 1); splits are made through its control API.
- COSMOS_MERGE_ENABLED_ENDPOINT, COSMOS_MERGE_ENABLED_KEY: an account with partition
  merge enabled (--merge-enabled).

What SDK 3.1.1 does when a range splits, from its source:

- It has no handling of 410/1002 (PartitionKeyRangeGone). retry_utility._Execute retries
  403/3, 429 and 404/1002 (the session substatus) only; anything else goes to
  _DefaultRetryPolicy, which retries connection errors only. A 410/1002 reaches the
  caller as errors.HTTPFailure (azure-sdk-for-python#20475: "Python cross partition
  query code does not handle partition splits. It will bubble up 410 Gone errors to
  the caller").
- A cross-partition query that needs the query plan (ORDER BY, TOP, aggregates) reads
  each range by id, from a routing map the client reads once and keeps for its lifetime
  (routing/routing_map_provider.py: _PartitionKeyRangeCache fills
  _collection_routing_map_by_item and never invalidates it). Paged across a split, the
  query fails with 410/1002, and so does every such query the client starts afterwards;
  a new client reads the new ranges.
- A query without those runs whole in the gateway (the SDK asks for a plan only after a
  400/1004), which carries it across the split.
- The change feed is read one range at a time (QueryItemsChangeFeed with
  partitionKeyRangeId); a retired range answers 410/1002. An application re-reads the
  ranges and goes on in each child from the parent's etag, which is what the newer
  SDKs do (azcosmos buildChildQueueEntries, .NET FeedRangeCompositeContinuation); these
  checks do that and expect every change once.

Merges: none under this SDK. The service merges the ranges of accounts with partition
merge enabled only, and such an account refuses every Python SDK: "requests from other
SDKs (older .NET SDK, older Java SDK, older JavaScript SDK, any Python SDK, Go SDK) …
are blocked" (learn.microsoft.com/azure/cosmos-db/merge). 3.1.1 does not send
x-ms-cosmos-sdk-supportedcapabilities (base.GetHeaders never sets it), so the check
below asserts the 400 the merge-enabled emulator answers to all it sends.

Prints one line per check; exits 1 when any fails.
"""

import os
import sys
import threading
import traceback

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.errors as errors

import emulator_control

ENDPOINT = os.environ.get("COSMOS_ENDPOINT", "").rstrip("/")
KEY = os.environ.get("COSMOS_KEY", "")
MERGE_ENDPOINT = os.environ.get("COSMOS_MERGE_ENABLED_ENDPOINT", "").rstrip("/")
MERGE_KEY = os.environ.get("COSMOS_MERGE_ENABLED_KEY", "")
if not (ENDPOINT and KEY and MERGE_ENDPOINT and MERGE_KEY):
    sys.exit("set COSMOS_ENDPOINT, COSMOS_KEY, COSMOS_MERGE_ENABLED_ENDPOINT and COSMOS_MERGE_ENABLED_KEY "
             "(emulator/sdkcompat_python_test.go does)")

# RANGES is the emulator's --ranges: every container starts with this many.
RANGES = 6

control = emulator_control.control_api(ENDPOINT, KEY)
client = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY})
DB_ID = "topology-py-%d" % os.getpid()
client.CreateDatabase({"id": DB_ID})
XP = {"enableCrossPartitionQuery": True}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_failure(status, fn, what, sub_status=None):
    try:
        fn()
    except errors.HTTPFailure as e:
        check(e.status_code == status, "%s: want %d, got %d (%s)" % (what, status, e.status_code, e))
        if sub_status is not None:
            check(e.sub_status == sub_status, "%s: want substatus %d, got %r" % (what, sub_status, e.sub_status))
        return e
    raise AssertionError("%s: want %d, it succeeded" % (what, status))


def repeated(ids):
    seen, twice = set(), set()
    for i in ids:
        (twice if i in seen else seen).add(i)
    return sorted(twice)


_seq = [0]


def fresh_container(options=None):
    _seq[0] += 1
    cid = "c%d" % _seq[0]
    client.CreateContainer("dbs/" + DB_ID, {"id": cid, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}},
                           options or {})
    return "dbs/%s/colls/%s" % (DB_ID, cid)


def seed(coll, n, written):
    for i in range(n):
        doc = {"id": "s%03d" % i, "pk": "k%d" % i, "n": i}
        client.CreateItem(coll, doc)
        written.add(doc["id"])


def ranges_of(coll, c=None):
    """The container's ranges in EPK order, read from the ranges feed (no cache)."""
    return sorted((c or client)._ReadPartitionKeyRanges(coll), key=lambda r: r["minInclusive"])


def ids_of(c, coll, query, options):
    return [d["id"] for d in c.QueryItems(coll, query, dict(XP, **options))]


# --- the change feed, range by range ------------------------------------------------

def drain_range(coll, range_id, etag):
    """Reads one range's change feed from etag (None: from the beginning) until it has
    nothing new; returns the ids and the etag to go on from."""
    opts = {"partitionKeyRangeId": range_id, "maxItemCount": 10}
    if etag is None:
        opts["isStartFromBeginning"] = True
    else:
        opts["continuation"] = etag
    it = client.QueryItemsChangeFeed(coll, opts)
    ids = []
    for _ in range(100):
        block = it.fetch_next_block()
        if not block:
            return ids, etag
        ids.extend(d["id"] for d in block)
        etag = client.last_response_headers.get("etag")
        check(etag, "a change feed page answers with an etag")
    raise AssertionError("range %s: the change feed did not end after 100 pages" % range_id)


def follow(coll, positions, seen, gone):
    """One pass over the ranges in positions (range id → etag), each read until it has
    nothing new. A range that answers 410/1002 was split: its children, the live ranges
    that list it among their parents, take its place from its etag."""
    pending = list(positions)
    while pending:
        r = pending.pop(0)
        try:
            ids, etag = drain_range(coll, r, positions[r])
        except errors.HTTPFailure as e:
            if (e.status_code, e.sub_status) != (410, 1002):
                raise
            children = [x["id"] for x in ranges_of(coll) if r in x.get("parents", [])]
            check(children, "range %s answered 410/1002 and no live range descends from it" % r)
            for child in children:
                positions[child] = positions[r]
                pending.append(child)
            del positions[r]
            gone.append(r)
            continue
        seen.extend(ids)
        positions[r] = etag


# --- the checks ---------------------------------------------------------------------

def test_paged_feeds():
    db_ids = ["%s-paged-%d" % (DB_ID, i) for i in range(3)]
    for d in db_ids:
        client.CreateDatabase({"id": d}, {"offerThroughput": 400})
    try:
        db0 = "dbs/" + db_ids[0]
        coll_ids = ["a", "b", "c"]
        for cid in coll_ids:
            client.CreateContainer(db0, {"id": cid, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}},
                                   {"offerThroughput": 400})
        coll = db0 + "/colls/a"
        written = set()
        seed(coll, 90, written)
        want = sorted(written)

        first = client.ReadDatabases({"maxItemCount": 10}).fetch_next_block()
        check(len(first) == 1, "the emulator serves feeds in pages of one, got a first page of %d" % len(first))

        ranges = list(client._ReadPartitionKeyRanges(coll))
        check(len(ranges) == RANGES and len(set(r["id"] for r in ranges)) == RANGES,
              "every range, one a page: got %r" % [r["id"] for r in ranges])
        # The query pipeline routes by the ranges it read in pages (routing_map_provider).
        got = list(client.QueryItems(coll, "SELECT VALUE COUNT(1) FROM c", dict(XP, maxItemCount=7)))
        check(got == [90], "VALUE COUNT(1) across %d ranges, got %r" % (RANGES, got))
        got = ids_of(client, coll, "SELECT c.id FROM c ORDER BY c.n", {"maxItemCount": 7})
        check(got == want, "ORDER BY across the ranges, got %r" % got)
        got = ids_of(client, coll, "SELECT c.id FROM c", {"maxItemCount": 7})
        check(sorted(got) == want and not repeated(got), "a plain cross-partition query, got %r" % sorted(got))

        seen = []
        positions = {r["id"]: None for r in ranges}
        follow(coll, positions, seen, [])
        check(not repeated(seen) and sorted(seen) == want,
              "every range's change feed from the beginning: each item once, got %r" % sorted(seen))

        dbs = [d["id"] for d in client.ReadDatabases()]
        check(not repeated(dbs) and all(d in dbs for d in db_ids), "databases listed once each, got %r" % dbs)
        found = [d["id"] for d in client.QueryDatabases({
            "query": "SELECT * FROM r WHERE STARTSWITH(r.id, @p)",
            "parameters": [{"name": "@p", "value": DB_ID + "-paged-"}]})]
        check(sorted(found) == db_ids, "query databases, got %r" % found)
        colls = [x["id"] for x in client.ReadContainers(db0)]
        check(sorted(colls) == coll_ids, "containers, got %r" % colls)

        offers = list(client.ReadOffers())
        check(not repeated([o["id"] for o in offers]), "no offer twice")
        rids = [client.ReadDatabase("dbs/" + d)["_rid"] for d in db_ids]
        rids += [client.ReadContainer(db0 + "/colls/" + cid)["_rid"] for cid in coll_ids]
        for rid in rids:
            n = len([o for o in offers if o.get("offerResourceId") == rid])
            check(n == 1, "one offer for %s, got %d" % (rid, n))
    finally:
        for d in db_ids:
            client.DeleteDatabase("dbs/" + d)


class Writer(threading.Thread):
    """Creates count items one after another with a client of its own, as an
    application's request loop does, while the checks go on; reached is set once
    milestone writes are acknowledged, so that the split comes at a known point."""

    def __init__(self, coll, count, milestone):
        super().__init__(daemon=True)
        self.coll, self.count, self.milestone = coll, count, milestone
        self.written, self.error = [], None
        self.reached = threading.Event()

    def run(self):
        try:
            c = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY})
            for i in range(self.count):
                doc = {"id": "w%03d" % i, "pk": "w%d" % i, "n": 1000 + i}
                c.CreateItem(self.coll, doc)
                self.written.append(doc["id"])
                if len(self.written) == self.milestone:
                    self.reached.set()
        except Exception as e:  # reported by the check that joins the writer
            self.error = e
        finally:
            self.reached.set()


def test_live_split():
    coll = fresh_container()
    written = set()
    seed(coll, 120, written)
    seeded = sorted(written)
    before = ranges_of(coll)
    check(len(before) == RANGES, "the container starts with %d ranges" % RANGES)

    # Follow every range's change feed, and open two cross-partition queries of 5 a page:
    # one the gateway runs whole, one the SDK runs from the plan, range by range.
    seen, gone = [], []
    positions = {r["id"]: None for r in before}
    follow(coll, positions, seen, gone)
    paged = client.QueryItems(coll, "SELECT c.id FROM c", dict(XP, maxItemCount=5))
    got = [d["id"] for d in paged.fetch_next_block()]
    check(len(got) == 5, "the first page holds 5 items, got %r" % got)
    ordered = client.QueryItems(coll, "SELECT c.id, c.n FROM c ORDER BY c.n", dict(XP, maxItemCount=5))
    check(len(ordered.fetch_next_block()) == 5, "the ORDER BY's first page holds 5 items")

    writer = Writer(coll, 60, 20)
    writer.start()
    check(writer.reached.wait(60), "20 writes within a minute")
    # The range a cross-partition query reads first (the lowest EPKs) splits, so that the
    # gateway query's position is in it.
    change = control("POST", "/splits", {"database": DB_ID, "container": coll.split("/")[-1], "range": before[0]["id"]})
    print("     split of range %s into %s with %d of 60 writes acknowledged"
          % (before[0]["id"], [r["id"] for r in change["created"]], len(writer.written)))
    check(change["retired"] == [before[0]["id"]] and len(change["created"]) == 2, "the split: %r" % change)

    pages = 0
    while True:
        block = paged.fetch_next_block()
        if not block:
            break
        got.extend(d["id"] for d in block)
        pages += 1
        if pages % 4 == 0:
            follow(coll, positions, seen, gone)
        check(pages < 200, "the gateway query ends")

    # The SDK's own pipeline meets the retired range and gives up, and the client's cached
    # routing map keeps every later pipelined query on it.
    def drain_ordered():
        while ordered.fetch_next_block():
            pass
    expect_failure(410, drain_ordered, "the ORDER BY paged across the split", sub_status=1002)
    expect_failure(410, lambda: list(client.QueryItems(coll, "SELECT VALUE COUNT(1) FROM c", XP)),
                   "a COUNT started after the split by the same client", sub_status=1002)

    writer.join(60)
    check(not writer.is_alive() and writer.error is None, "the writes went through: %r" % writer.error)
    written.update(writer.written)
    follow(coll, positions, seen, gone)

    check(gone == [before[0]["id"]], "the change feed met the split of range %s, met %r" % (before[0]["id"], gone))
    check(sorted(positions) == sorted(r["id"] for r in ranges_of(coll)), "it follows every live range")
    check(not repeated(seen), "no change twice: %r" % repeated(seen))
    check(sorted(seen) == sorted(written), "every change once: missing %r" % sorted(written - set(seen)))

    fresh = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY})
    got_count = list(fresh.QueryItems(coll, "SELECT VALUE COUNT(1) FROM c", XP))
    check(got_count == [len(written)], "a new client's COUNT: %r, want %d" % (got_count, len(written)))
    by_n = sorted(written, key=lambda i: int(i[1:]) + (1000 if i[0] == "w" else 0))
    check(ids_of(fresh, coll, "SELECT c.id FROM c ORDER BY c.n", {"maxItemCount": 50}) == by_n,
          "a new client's ORDER BY returns every item in order")

    # The gateway's cross-partition query resumes from its continuation whatever the
    # ranges did meanwhile, as the service does (learn.microsoft.com/azure/cosmos-db/
    # nosql/query/pagination: "stateless at the server side").
    check(not repeated(got), "the gateway query paged across the split: items twice: %r" % repeated(got))
    check(not [i for i in seeded if i not in got],
          "the gateway query paged across the split: missing: %r" % [i for i in seeded if i not in got])
    check(set(got) <= written, "the gateway query paged across the split: unknown items")


def test_merge_enabled_refuses_this_sdk():
    # The constructor reads the account; _GlobalEndpointManager._GetDatabaseAccount
    # swallows the HTTPFailure when no preferred location is set, so the client is made.
    c = cosmos_client.CosmosClient(MERGE_ENDPOINT, {"masterKey": MERGE_KEY})
    sent = []
    c._requests_session.hooks["response"].append(
        lambda r, *a, **k: sent.append((r.request.method, r.request.url, r.status_code,
                                        r.request.headers.get("x-ms-cosmos-sdk-supportedcapabilities"))))
    expect_failure(400, lambda: c.GetDatabaseAccount(), "the account read", sub_status=0)
    expect_failure(400, lambda: list(c.ReadDatabases()), "the databases feed", sub_status=0)
    expect_failure(400, lambda: c.CreateDatabase({"id": "refused"}), "a database create", sub_status=0)
    expect_failure(400, lambda: c.ReadItem("dbs/app/colls/items/docs/a", {"partitionKey": "a"}), "a point read",
                   sub_status=0)
    check(len(sent) >= 4 and all(s[2] == 400 and s[3] is None for s in sent),
          "every request went without the capability header and was refused: %r" % sent)
    # The header is all that differs: the same request with PartitionMerge (bit 0) passes.
    for caps, want in [(None, 400), ("0", 400), ("2", 400), ("1", 200), ("3", 200)]:
        status, _, body = emulator_control.raw_get(MERGE_ENDPOINT, MERGE_KEY, "/dbs", "dbs", "",
                                                   {} if caps is None else {"x-ms-cosmos-sdk-supportedcapabilities": caps})
        check(status == want, "GET /dbs with capabilities %r: %d, want %d (%r)" % (caps, status, want, body))


failed = 0
try:
    for name, fn in [("feeds in pages of one: ranges, queries, change feed, databases, containers, offers",
                      test_paged_feeds),
                     ("a live split while writes run, a query is paged and the change feed is followed",
                      test_live_split),
                     ("a merge-enabled account refuses SDK 3.1.1 with 400 (no merge capability)",
                      test_merge_enabled_refuses_this_sdk)]:
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
