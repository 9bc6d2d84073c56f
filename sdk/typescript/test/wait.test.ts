// Run by `npm test` against the server the Go test in this directory starts
// (ONCE_DIRECT_URL, ONCE_TOKEN); ONCE_FAULT_URL starts and ends operations
// on it (POST /operations, POST /operations/{id}/succeed) and counts the
// reads waiting on it (GET /waiting).
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { createOnceClient, OperationWaitTimeout, waitForOperation } from "../src/index.js";

const server = process.env.ONCE_DIRECT_URL;
const fault = process.env.ONCE_FAULT_URL;

async function startOperation(): Promise<string> {
  const res = await fetch(`${fault}/operations`, { method: "POST" });
  assert.equal(res.status, 200);
  return res.text();
}

/** Reads GET /waiting until the server has n reads parked (10 s at most). */
async function untilWaiting(n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await fetch(`${fault}/waiting`);
    if (Number(await res.text()) === n) {
      return;
    }
    assert.ok(Date.now() < deadline, `${n} reads waiting on the server`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("waiting for an operation", { skip: server === undefined && "ONCE_DIRECT_URL is not set" }, () => {
  const client = createOnceClient(server ?? "", process.env.ONCE_TOKEN ?? "");

  it("waitForOperation returns when the operation ends", async () => {
    const id = await startOperation();
    const waiting = waitForOperation(client, id);
    await untilWaiting(1);
    const ended = await fetch(`${fault}/operations/${id}/succeed`, { method: "POST" });
    assert.equal(ended.status, 204);
    // The server holds a read for 25 s: a helper that was not woken would
    // answer only then, after this test's 10 s.
    const op = await Promise.race([
      waiting,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("not woken within 10 s")), 10_000).unref()),
    ]);
    assert.equal(op.id, id);
    assert.equal(op.status, "succeeded");
  });

  it("waitForOperation throws at its deadline with the last state", async () => {
    const id = await startOperation();
    await assert.rejects(waitForOperation(client, id, { timeoutMs: 1_500 }), (err: unknown) => {
      assert.ok(err instanceof OperationWaitTimeout, String(err));
      if (err.operation !== undefined) {
        assert.equal(err.operation.status, "pending");
      }
      return true;
    });
    await assert.rejects(waitForOperation(client, globalThis.crypto.randomUUID()), /404/);
  });
});
