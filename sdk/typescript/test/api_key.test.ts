// Run by `npm test` against the server the Go test in this directory starts
// (ONCE_DIRECT_URL), with an API key its admin made (ONCE_API_KEY).
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { createOnceClientWithAPIKey } from "../src/index.js";

const server = process.env.ONCE_DIRECT_URL;
const apiKey = process.env.ONCE_API_KEY;

describe("an API key", { skip: (server === undefined || apiKey === undefined) && "ONCE_DIRECT_URL or ONCE_API_KEY is not set" }, () => {
  it("authenticates the client it is given to", async () => {
    const client = createOnceClientWithAPIKey(server ?? "", apiKey ?? "");
    const { data, response } = await client.GET("/v1/api-keys");
    assert.equal(response.status, 200);
    assert.ok(data?.items.some((k) => (apiKey ?? "").startsWith(`${k.prefix}_`)), "the key lists itself by its prefix");
  });

  it("is refused when it is no API key", () => {
    assert.throws(() => createOnceClientWithAPIKey(server ?? "", "eyJhbGciOiJIUzI1NiJ9.e30.x"), TypeError);
  });
});
