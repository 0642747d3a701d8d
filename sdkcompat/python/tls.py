"""The official Python SDK (Debian's python3-azure-cosmos, 3.1.1) against cosmosctl's
emulator serving https (cosmosctl emulator --tls). emulator/sdkcompat_tls_test.go
starts the emulator and runs this file with /usr/bin/python3; COSMOS_ENDPOINT and
COSMOS_KEY name it and REQUESTS_CA_BUNDLE its certificate, which is all this SDK (it
sends through requests) needs to trust it.

SDK 3.1.1 does not verify certificates at all for the hosts localhost and 127.0.0.1
(synchronized_request._Request: is_ssl_enabled is false for them), so the test serves
the emulator on 127.0.0.2, where the SDK verifies and REQUESTS_CA_BUNDLE decides.

Prints one line per check; exits 1 when any fails.
"""

import os
import sys

import requests

import azure.cosmos.cosmos_client as cosmos_client
import azure.cosmos.documents as documents

ENDPOINT = os.environ.get("COSMOS_ENDPOINT", "").rstrip("/")
KEY = os.environ.get("COSMOS_KEY", "")
BUNDLE = os.environ.get("REQUESTS_CA_BUNDLE", "")
if not ENDPOINT or not KEY or not BUNDLE:
    sys.exit("set COSMOS_ENDPOINT, COSMOS_KEY and REQUESTS_CA_BUNDLE (emulator/sdkcompat_tls_test.go does)")

failed = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


check(ENDPOINT.startswith("https://") and "//localhost" not in ENDPOINT and "//127.0.0.1" not in ENDPOINT,
      "the endpoint %s is https on a host the SDK verifies" % ENDPOINT)

policy = documents.ConnectionPolicy()
policy.PreferredLocations = ["North Europe"]
client = cosmos_client.CosmosClient(ENDPOINT, {"masterKey": KEY}, policy)
client.CreateDatabase({"id": "tls"})
client.CreateContainer("dbs/tls", {"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}})
created = client.CreateItem("dbs/tls/colls/items", {"id": "a", "pk": "p"})
check(created["id"] == "a", "create over https")
read = client.ReadItem("dbs/tls/colls/items/docs/a", {"partitionKey": "p"})
check(read["id"] == "a", "read over https")
region = (client.last_response_headers or {}).get("x-ms-cosmos-emulator-region")
check(region == "North Europe", "the read went to the preferred read region's https endpoint, got %r" % region)

# Without the emulator's certificate requests refuses the connection: the checks above
# passed because REQUESTS_CA_BUNDLE names it.
try:
    requests.get(ENDPOINT + "/_explorer/emulator.pem", verify=requests.certs.where(), timeout=30)
    check(False, "the certificate is not trusted without REQUESTS_CA_BUNDLE")
except requests.exceptions.SSLError:
    check(True, "the certificate is not trusted without REQUESTS_CA_BUNDLE")

sys.exit(1 if failed else 0)
