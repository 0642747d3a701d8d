// Requests signed with the account key the way the SDKs sign them: the emulator's
// control API (faults, failover, splits, merges), and raw requests that a test wants to
// send without an SDK's own headers. Shared by the suites in this directory.

import crypto from "node:crypto";

// sign is the master-key authorization header of a request: the HMAC of verb, resource
// type, resource link and date, as every Cosmos DB SDK computes it.
export function signer(key) {
  return (verb, resourceType, resourceLink, date) => {
    const text = `${verb.toLowerCase()}\n${resourceType.toLowerCase()}\n${resourceLink}\n${date.toLowerCase()}\n\n`;
    const sig = crypto.createHmac("sha256", Buffer.from(key, "base64")).update(text, "utf8").digest("base64");
    return encodeURIComponent(`type=master&ver=1.0&sig=${sig}`);
  };
}

// controlAPI returns control(method, path, body): a call to the emulator's control API
// under /_emulator, which answers JSON and throws on anything but 2xx.
export function controlAPI(endpoint, key) {
  const sign = signer(key);
  return async function control(method, path, body) {
    const date = new Date().toUTCString();
    const segs = ["_emulator", ...path.split("/").filter(Boolean)];
    // An even number of segments names one resource: type is the second to last, the
    // link the whole path; an odd number is a feed of the last segment's type.
    const type = segs.length % 2 === 0 ? segs[segs.length - 2] : segs[segs.length - 1];
    const link = segs.length % 2 === 0 ? segs.join("/") : segs.slice(0, -1).join("/");
    const res = await fetch(`${endpoint.replace(/\/$/, "")}/${segs.join("/")}`, {
      method,
      headers: {
        "x-ms-date": date,
        "x-ms-version": "2020-07-15",
        authorization: sign(method, type, link, date),
        "content-type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new Error(`control ${method} ${path}: ${res.status} ${text}`);
    }
    return text ? JSON.parse(text) : null;
  };
}
