// Run by `npm test` (node's test runner on the compiled files). The first
// suite needs a running server behind a fault proxy; the Go test in this
// directory starts both and sets ONCE_URL, ONCE_DIRECT_URL, ONCE_TOKEN and
// ONCE_FAULT_URL. The second suite runs anywhere.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { createOnceClient, idempotent, type RetryPolicy } from "../src/index.js";

const fast: RetryPolicy = { initialIntervalMs: 1, maxIntervalMs: 5, maxElapsedMs: 10_000 };

/** A fetch that records the Idempotency-Key of every attempt. */
function recording(next: (req: Request) => Promise<Response>) {
  const keys: (string | null)[] = [];
  const fetch = (req: Request) => {
    keys.push(req.headers.get("Idempotency-Key"));
    return next(req);
  };
  return { keys, fetch };
}

const server = process.env.ONCE_URL;

describe("against a running server", { skip: server === undefined && "ONCE_URL is not set" }, () => {
  it("retries a call whose answer was cut with the same key, and it executes once", async () => {
    const token = process.env.ONCE_TOKEN ?? "";
    const rec = recording((req) => fetch(req));
    const client = createOnceClient(server ?? "", token, { fetch: rec.fetch });
    const direct = createOnceClient(process.env.ONCE_DIRECT_URL ?? "", token);

    // The proxy cuts the next connection once the server starts answering:
    // the store is created, the client sees a network error.
    const armed = await fetch(`${process.env.ONCE_FAULT_URL}/cut`, { method: "POST" });
    assert.equal(armed.status, 204);

    const shop = `ts-${globalThis.crypto.randomUUID()}`;
    const res = await idempotent(
      (key) =>
        client.POST("/v1/stores", {
          params: { header: { "Idempotency-Key": key } },
          body: {
            platform: "shopify",
            name: "TypeScript shop",
            external_shop_id: shop,
            credentials: { api_key: "ts-key-0123456789", api_secret: "ts-secret-0123456789" },
          },
        }),
      fast,
    );
    assert.equal(res.response.status, 201, JSON.stringify(res.error));
    assert.equal(res.response.headers.get("Idempotent-Replayed"), "true", "the retry got the saved answer");
    assert.equal(rec.keys.length, 2, "one cut attempt, one retry");
    assert.equal(rec.keys[0], rec.keys[1], "the retry reuses the key");

    // One execution: one verification started for the store.
    const storeId = res.data?.store.id;
    const ops = await direct.GET("/v1/operations", { params: { query: { kind: "store.verify" } } });
    assert.equal(ops.response.status, 200);
    const mine = (ops.data?.items ?? []).filter((op) => op.resource_id === storeId);
    assert.equal(mine.length, 1);
  });
});

/** A stub server: attempt i gets answers[i], the last one repeating. */
function stub(...answers: (() => Response)[]) {
  let n = 0;
  const rec = recording(async () => answers[Math.min(n++, answers.length - 1)]!());
  return { rec, client: createOnceClient("http://stub.invalid", "t", { fetch: rec.fetch }) };
}

const problem = (status: number, code: string, retryAfter?: string) => () =>
  new Response(JSON.stringify({ status, code, title: "x", retry_same_key: false }), {
    status,
    headers: { "Content-Type": "application/problem+json", ...(retryAfter ? { "Retry-After": retryAfter } : {}) },
  });
const accepted = () => new Response("{}", { status: 202, headers: { "Content-Type": "application/json" } });

const verify = (client: ReturnType<typeof stub>["client"], policy: RetryPolicy = fast) =>
  idempotent(
    (key) =>
      client.POST("/v1/stores/{id}/verifications", {
        params: { path: { id: "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4" }, header: { "Idempotency-Key": key } },
      }),
    policy,
  );

describe("the retry decision", () => {
  const cases: [string, (() => Response)[], number, number][] = [
    ["503 then success", [problem(503, "UNAVAILABLE"), accepted], 2, 202],
    ["500 then success", [problem(500, "INTERNAL"), accepted], 2, 202],
    ["in progress after Retry-After", [problem(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS", "0"), accepted], 2, 202],
    ["key reused is final", [problem(409, "IDEMPOTENCY_KEY_REUSED"), accepted], 1, 409],
    ["another conflict is final", [problem(409, "STORE_ALREADY_EXISTS"), accepted], 1, 409],
    ["validation is final", [problem(422, "VALIDATION_FAILED"), accepted], 1, 422],
  ];
  for (const [name, answers, attempts, status] of cases) {
    it(name, async () => {
      const { rec, client } = stub(...answers);
      const res = await verify(client);
      assert.equal(res.response.status, status);
      assert.equal(rec.keys.length, attempts);
      assert.ok(rec.keys.every((k) => k === rec.keys[0]), "every attempt sends the same key");
    });
  }

  it("retries a network error with the same key", async () => {
    let failed = false;
    const rec = recording(async () => {
      if (!failed) {
        failed = true;
        throw new TypeError("fetch failed");
      }
      return accepted();
    });
    const res = await verify(createOnceClient("http://stub.invalid", "t", { fetch: rec.fetch }));
    assert.equal(res.response.status, 202);
    assert.equal(rec.keys.length, 2);
    assert.equal(rec.keys[0], rec.keys[1]);
  });

  it("stops at the deadline with the last answer", async () => {
    const { rec, client } = stub(problem(503, "UNAVAILABLE"));
    const res = await verify(client, { ...fast, maxElapsedMs: 50 });
    assert.equal(res.response.status, 503);
    assert.ok(rec.keys.length > 1);
  });

  it("makes a new key per logical call", async () => {
    const { rec, client } = stub(accepted);
    await verify(client);
    await verify(client);
    assert.notEqual(rec.keys[0], rec.keys[1]);
  });
});

describe("createOnceClient", () => {
  /** The headers of the one request a client sends. */
  async function sent(options: Parameters<typeof createOnceClient>[2], init?: { headers?: Record<string, string> }) {
    let seen: Headers | undefined;
    const client = createOnceClient("http://stub.invalid", "t0k3n", {
      ...options,
      fetch: async (req: Request) => {
        seen = req.headers;
        return accepted();
      },
    });
    await client.GET("/v1/operations", init ?? {});
    assert.ok(seen);
    return seen;
  }

  it("sends the caller's headers beside the token", async () => {
    for (const headers of [
      { "X-Tenant-Hint": "eu" },
      new Headers({ "X-Tenant-Hint": "eu" }),
      [["X-Tenant-Hint", "eu"]] as [string, string][],
    ]) {
      const h = await sent({ headers });
      assert.equal(h.get("X-Tenant-Hint"), "eu", `headers given as ${headers.constructor.name}`);
      assert.equal(h.get("Authorization"), "Bearer t0k3n");
    }
  });

  it("keeps the token over a caller's Authorization, and a request's own headers", async () => {
    const h = await sent({ headers: { Authorization: "Basic x", "X-A": "1" } }, { headers: { "X-B": "2" } });
    assert.equal(h.get("Authorization"), "Bearer t0k3n");
    assert.equal(h.get("X-A"), "1");
    assert.equal(h.get("X-B"), "2");
  });
});
