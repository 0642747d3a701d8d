// The official JavaScript SDK (@azure/cosmos) against cosmosctl's emulator serving https
// (cosmosctl emulator --tls). emulator/sdkcompat_tls_test.go starts the emulator and
// runs this file with `node --test`, COSMOS_ENDPOINT and COSMOS_KEY naming it and
// NODE_EXTRA_CA_CERTS naming its certificate: that variable is all a Node.js project
// needs to trust the emulator, as it is for Microsoft's emulator. Nothing here turns
// verification off.

import { test } from "node:test";
import assert from "node:assert/strict";
import tls from "node:tls";
import { CosmosClient } from "@azure/cosmos";

const endpoint = process.env.COSMOS_ENDPOINT;
const key = process.env.COSMOS_KEY;
if (!endpoint || !key || !process.env.NODE_EXTRA_CA_CERTS) {
  throw new Error("set COSMOS_ENDPOINT, COSMOS_KEY and NODE_EXTRA_CA_CERTS (emulator/sdkcompat_tls_test.go does)");
}

test("the endpoint is https", () => {
  assert.match(endpoint, /^https:\/\//);
});

test("the SDK writes and reads over https, in a read region too", async () => {
  const client = new CosmosClient({ endpoint, key, connectionPolicy: { preferredLocations: ["North Europe"] } });
  try {
    const { database } = await client.databases.createIfNotExists({ id: "tls" });
    const { container } = await database.containers.createIfNotExists({ id: "items", partitionKey: { paths: ["/pk"] } });
    const created = await container.items.create({ id: "a", pk: "p" });
    assert.equal(created.statusCode, 201);
    const read = await container.item("a", "p").read();
    assert.equal(read.statusCode, 200);
    assert.equal(read.resource.id, "a");
    assert.equal(read.headers["x-ms-cosmos-emulator-region"], "North Europe");
    const readEndpoint = await client.getReadEndpoint();
    assert.match(readEndpoint, /^https:\/\//, "the account document advertises https regions");
  } finally {
    client.dispose();
  }
});

test("without NODE_EXTRA_CA_CERTS the certificate is not trusted", async () => {
  // tls.rootCertificates is Node's bundled roots only, without NODE_EXTRA_CA_CERTS:
  // the handshake must fail, so the test above passed because of that variable.
  const u = new URL(endpoint);
  const err = await new Promise((resolve) => {
    const socket = tls.connect({ host: u.hostname, port: Number(u.port), ca: tls.rootCertificates }, () => {
      socket.end();
      resolve(null);
    });
    socket.on("error", resolve);
  });
  assert.ok(err, "the emulator's certificate was trusted without NODE_EXTRA_CA_CERTS");
  assert.match(err.code, /SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/);
});
