#!/usr/bin/python3
"""The official Python SDK (Debian's python3-azure-cosmos, 3.1.1) against cosmosctl's
emulator. emulator/sdkcompat_python_test.go starts a fresh emulator and runs this file
with /usr/bin/python3; COSMOS_ENDPOINT and COSMOS_KEY name it.

The SDK keeps response headers in a plain dict and looks them up by their lower-case
names, so each check here also shows that the emulator sends lower-case header names:
with canonical names (X-Ms-Continuation) paging stops at the first page, a 429 is
retried without waiting, and no session token is kept.

Faults are set through the emulator's control API, signed with the account key like any
other request. Prints one line per check; exits 1 when any fails.
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import time
import traceback
import urllib.parse
import urllib.request
from email.utils import formatdate

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.errors as errors

ENDPOINT = os.environ.get("COSMOS_ENDPOINT", "").rstrip("/")
KEY = os.environ.get("COSMOS_KEY", "")
if not ENDPOINT or not KEY:
    sys.exit("set COSMOS_ENDPOINT and COSMOS_KEY (emulator/sdkcompat_python_test.go does)")


# --- the emulator's control API ------------------------------------------------------

def sign(verb, resource_type, resource_link, date):
    text = "%s\n%s\n%s\n%s\n\n" % (verb.lower(), resource_type.lower(), resource_link, date.lower())
    mac = hmac.new(base64.b64decode(KEY), text.encode("utf-8"), hashlib.sha256).digest()
    sig = base64.b64encode(mac).decode()
    return urllib.parse.quote("type=master&ver=1.0&sig=" + sig, safe="")


def control(method, path, body=None):
    segs = ["_emulator"] + [s for s in path.split("/") if s]
    # An even number of segments names one resource (type: the second to last, link: the
    # whole path); an odd number is a feed of the last segment's type.
    if len(segs) % 2 == 0:
        rtype, link = segs[-2], "/".join(segs)
    else:
        rtype, link = segs[-1], "/".join(segs[:-1])
    date = formatdate(usegmt=True)
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(ENDPOINT + "/" + "/".join(segs), data=data, method=method, headers={
        "x-ms-date": date,
        "x-ms-version": "2020-07-15",
        "authorization": sign(method, rtype, link, date),
        "content-type": "application/json",
    })
    with urllib.request.urlopen(req) as resp:
        text = resp.read()
    return json.loads(text) if text else None


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


failed = 0
try:
    for name, fn in [("CRUD", test_crud), ("query paging with continuation", test_paging),
                     ("429 with retry-after", test_throttle), ("session token", test_session)]:
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
