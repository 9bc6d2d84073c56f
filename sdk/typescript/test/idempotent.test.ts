// Run by `npm test` (node's test runner on the compiled files). The first
// suite needs a running server behind a fault proxy, the second a server
// with a low rate of writes on a clock the test moves; the Go test in this
// directory starts them and sets ONCE_URL, ONCE_DIRECT_URL, ONCE_TOKEN,
// ONCE_FAULT_URL, ONCE_LIMITED_URL and ONCE_LIMITED_TOKEN. The other
// suites run anywhere.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { createOnceClient, idempotent, type Problem, type RetryPolicy } from "../src/index.js";

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

const limited = process.env.ONCE_LIMITED_URL;

describe("against a rate-limited server", { skip: limited === undefined && "ONCE_LIMITED_URL is not set" }, () => {
  // The server allows one write per second with no burst (ONCE_RATE_LIMIT=1/s:1)
  // and its clock stands still until POST $ONCE_FAULT_URL/clock?seconds=N
  // moves it: a refused write stays refused until the test says.
  const token = process.env.ONCE_LIMITED_TOKEN ?? "";
  const storeBody = (shop: string) => ({
    platform: "shopify" as const,
    name: "Limited shop",
    external_shop_id: shop,
    credentials: { api_key: "ts-key-0123456789", api_secret: "ts-secret-0123456789" },
  });
  const createStore = (client: ReturnType<typeof createOnceClient>, policy: RetryPolicy) =>
    idempotent(
      (key) =>
        client.POST("/v1/stores", {
          params: { header: { "Idempotency-Key": key } },
          body: storeBody(`ts-limited-${globalThis.crypto.randomUUID()}`),
        }),
      policy,
    );

  /** Uses up this second's write: created, or refused if already used up. */
  async function useUpTheRate() {
    const res = await createOnceClient(limited ?? "", token).POST("/v1/stores", {
      params: { header: { "Idempotency-Key": globalThis.crypto.randomUUID() } },
      body: storeBody(`ts-spent-${globalThis.crypto.randomUUID()}`),
    });
    assert.ok([201, 429].includes(res.response.status), JSON.stringify(res.error));
  }

  /** A fetch that records each answer's status and key, and tells onAnswer. */
  function answers(onAnswer: (res: Response) => Promise<void> = async () => {}) {
    const seen: { key: string | null; status: number }[] = [];
    const fetch = async (req: Request) => {
      const res = await globalThis.fetch(req);
      seen.push({ key: req.headers.get("Idempotency-Key"), status: res.status });
      await onAnswer(res);
      return res;
    };
    return { seen, fetch };
  }

  it("waits out a 429's Retry-After and sends the same key again, which executes", async () => {
    await useUpTheRate();
    const rec = answers(async (res) => {
      if (res.status === 429) {
        // The wait the client was told passes on the server's clock too.
        const moved = await fetch(`${process.env.ONCE_FAULT_URL}/clock?seconds=${res.headers.get("Retry-After")}`, {
          method: "POST",
        });
        assert.equal(moved.status, 204);
      }
    });
    const res = await createStore(createOnceClient(limited ?? "", token, { fetch: rec.fetch }), {});
    assert.equal(res.response.status, 201, JSON.stringify(res.error));
    assert.equal(res.response.headers.get("Idempotent-Replayed"), null, "the refused attempt ran nothing");
    assert.deepEqual(rec.seen.map((a) => a.status), [429, 201]);
    assert.equal(rec.seen[0]?.key, rec.seen[1]?.key, "the retry reuses the key");
  });

  for (const [name, policy] of [
    ["gives up at maxElapsedMs with the last 429", () => ({ maxElapsedMs: 4_000 })],
    ["gives up when its signal times out, with the last 429", () => ({ signal: AbortSignal.timeout(4_000) })],
  ] as [string, () => RetryPolicy][]) {
    it(name, async () => {
      await useUpTheRate(); // and the clock does not move: every attempt is refused
      const rec = answers();
      const res = await createStore(createOnceClient(limited ?? "", token, { fetch: rec.fetch }), policy());
      assert.equal(res.response.status, 429);
      assert.equal((res.error as Problem | undefined)?.code, "RATE_LIMITED");
      assert.equal(res.response.headers.get("Retry-After"), "1");
      assert.ok(rec.seen.length >= 2, `${rec.seen.length} attempt(s): it retries after Retry-After before giving up`);
      assert.ok(rec.seen.every((a) => a.status === 429 && a.key === rec.seen[0]?.key), JSON.stringify(rec.seen));
    });
  }
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
    ["rate limited after Retry-After", [problem(429, "RATE_LIMITED", "0"), problem(429, "RATE_LIMITED", "0"), accepted], 3, 202],
    ["rate limited until an HTTP-date already past", [problem(429, "RATE_LIMITED", "Wed, 21 Oct 2015 07:28:00 GMT"), accepted], 2, 202],
    ["rate limited without Retry-After: the backoff", [problem(429, "RATE_LIMITED"), accepted], 2, 202],
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
    const res = await verify(client, { ...fast, maxElapsedMs: 1_000 }); // long enough for a second attempt on a loaded machine
    assert.equal(res.response.status, 503);
    assert.ok(rec.keys.length > 1);
  });

  const inAnHour = () => new Date(Date.now() + 3_600_000).toUTCString();
  for (const [name, retryAfter, policy] of [
    ["a Retry-After past maxElapsedMs is not waited: the 429 is the answer", "3600", { ...fast }],
    ["nor an HTTP-date past it", inAnHour(), { ...fast }],
  ] as [string, string, RetryPolicy][]) {
    it(name, async () => {
      const { rec, client } = stub(problem(429, "RATE_LIMITED", retryAfter), accepted);
      let retries = 0;
      const res = await verify(client, { ...policy, onRetry: () => retries++ });
      assert.equal(res.response.status, 429);
      assert.equal((res.error as Problem | undefined)?.code, "RATE_LIMITED");
      assert.equal(rec.keys.length, 1);
      assert.equal(retries, 0);
    });
  }

  for (const [status, code] of [
    [429, "RATE_LIMITED"],
    [409, "IDEMPOTENCY_REQUEST_IN_PROGRESS"],
  ] as [number, string][]) {
    it(`a signal that times out during a wait ends it with the last answer (${status})`, async () => {
      const { rec, client } = stub(problem(status, code, "60"), accepted);
      const res = await verify(client, { ...fast, maxElapsedMs: 120_000, signal: AbortSignal.timeout(20) });
      assert.equal(res.response.status, status);
      assert.equal(rec.keys.length, 1);
    });
  }

  it("an aborted signal ends a wait with its reason", async () => {
    const { client } = stub(problem(429, "RATE_LIMITED", "60"), accepted);
    const abort = new AbortController();
    await assert.rejects(verify(client, { ...fast, maxElapsedMs: 120_000, signal: abort.signal, onRetry: () => abort.abort() }), {
      name: "AbortError",
    });
  });

  it("waits what Retry-After says, seconds or an HTTP-date, plus a little jitter", async () => {
    const now = Date.now();
    const at = (ms: number) => new Date(now + ms).toUTCString();
    const asctime = (ms: number) => {
      // "Fri Dec  4 18:00:30 2026": the third form of HTTP-date, in GMT.
      const d = new Date(now + ms);
      const [day, , , , time] = d.toUTCString().split(" ");
      const month = d.toLocaleString("en-US", { month: "short", timeZone: "UTC" });
      return `${day?.slice(0, 3)} ${month} ${String(d.getUTCDate()).padStart(2, " ")} ${time} ${d.getUTCFullYear()}`;
    };
    for (const [header, wantMs] of [
      ["0", 0],
      ["2", 2_000],
      [" 7 ", 7_000],
      [at(90_000), 90_000],
      [at(-60_000), 0],
      [asctime(30_000), 30_000],
      ["", undefined],
      ["-1", undefined],
      ["1.5", undefined],
      ["soon", undefined],
    ] as [string, number | undefined][]) {
      const { client } = stub(problem(429, "RATE_LIMITED", header), accepted);
      const waits: number[] = [];
      const abort = new AbortController();
      // initialIntervalMs is the jitter on top of Retry-After, and the
      // ceiling of the backoff's first wait: the wait is told, then aborted.
      const policy = { initialIntervalMs: 1, maxElapsedMs: 3_600_000, signal: abort.signal };
      await assert.rejects(verify(client, { ...policy, onRetry: (_, w) => (waits.push(w), abort.abort()) }));
      assert.equal(waits.length, 1, `Retry-After ${JSON.stringify(header)}`);
      const wait = waits[0] ?? NaN;
      if (wantMs === undefined) {
        assert.ok(wait <= 1, `Retry-After ${JSON.stringify(header)}: the backoff's first wait, not ${wait} ms`);
      } else {
        // An HTTP-date has whole seconds, and is read some time after now:
        // up to a second and that time less than asked.
        const slack = /\d\d:\d\d/.test(header) ? 1_000 + (Date.now() - now) : 0;
        assert.ok(wait >= wantMs - slack && wait <= wantMs + 1, `Retry-After ${JSON.stringify(header)}: ${wait} ms, want ${wantMs}`);
      }
    }
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
