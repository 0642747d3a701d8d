"""Requests signed with the account key the way the SDKs sign them: the emulator's control
API (faults, replication lag, splits, merges), and raw requests that a check wants to
send without an SDK's own headers. Shared by the scripts in this directory."""

import base64
import hashlib
import hmac
import json
import urllib.error
import urllib.parse
import urllib.request
from email.utils import formatdate


def signer(key):
    """The master-key authorization header of a request: the HMAC of verb, resource type,
    resource link and date, as every Cosmos DB SDK computes it."""
    secret = base64.b64decode(key)

    def sign(verb, resource_type, resource_link, date):
        text = "%s\n%s\n%s\n%s\n\n" % (verb.lower(), resource_type.lower(), resource_link, date.lower())
        sig = base64.b64encode(hmac.new(secret, text.encode("utf-8"), hashlib.sha256).digest()).decode()
        return urllib.parse.quote("type=master&ver=1.0&sig=" + sig, safe="")

    return sign


def control_api(endpoint, key):
    """control(method, path, body=None): a call to the emulator's control API under
    /_emulator, which answers JSON and raises urllib.error.HTTPError on anything but 2xx."""
    sign = signer(key)
    endpoint = endpoint.rstrip("/")

    def control(method, path, body=None):
        segs = ["_emulator"] + [s for s in path.split("/") if s]
        # An even number of segments names one resource (type: the second to last, link:
        # the whole path); an odd number is a feed of the last segment's type.
        if len(segs) % 2 == 0:
            rtype, link = segs[-2], "/".join(segs)
        else:
            rtype, link = segs[-1], "/".join(segs[:-1])
        date = formatdate(usegmt=True)
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(endpoint + "/" + "/".join(segs), data=data, method=method, headers={
            "x-ms-date": date,
            "x-ms-version": "2020-07-15",
            "authorization": sign(method, rtype, link, date),
            "content-type": "application/json",
        })
        with urllib.request.urlopen(req) as resp:
            text = resp.read()
        return json.loads(text) if text else None

    return control


def raw_get(endpoint, key, path, resource_type, resource_link, headers=None):
    """GET path signed like an SDK's request, with only the headers given besides the
    date, version and authorization: (status, response headers, decoded body or None)."""
    date = formatdate(usegmt=True)
    all_headers = {
        "x-ms-date": date,
        "x-ms-version": "2018-12-31",
        "authorization": signer(key)("GET", resource_type, resource_link, date),
    }
    all_headers.update(headers or {})
    req = urllib.request.Request(endpoint.rstrip("/") + path, method="GET", headers=all_headers)
    try:
        with urllib.request.urlopen(req) as resp:
            status, got, text = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        status, got, text = e.code, e.headers, e.read()
    try:
        body = json.loads(text) if text else None
    except ValueError:
        body = None
    return status, got, body
