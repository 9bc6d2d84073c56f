// The TypeScript client of the once API: `schema.d.ts` is generated from the
// committed spec by openapi-typescript (`npm run generate`; `make
// openapi-check` fails if it is stale), requests go through openapi-fetch,
// and `idempotent` is the one thing written by hand: safe retries.
import createClient, { type Client, type ClientOptions, mergeHeaders } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };
export type Problem = components["schemas"]["Problem"];

/**
 * A typed client for the API at baseUrl, authenticated with a bearer token.
 * Headers in options are sent with every request, beside the Authorization
 * header made from token (which replaces an Authorization among them).
 */
export function createOnceClient(baseUrl: string, token: string, options: ClientOptions = {}): Client<paths> {
  const { headers } = options;
  return createClient<paths>({
    ...options,
    baseUrl,
    // mergeHeaders reads a record or a Headers, not a list of pairs.
    headers: mergeHeaders(Array.isArray(headers) ? new Headers(headers) : headers, {
      Authorization: `Bearer ${token}`,
    }),
  });
}

/** Bounds the retries of one logical call; every field has a default. */
export interface RetryPolicy {
  /** Deadline of the whole call, retries included (default 30 000 ms). */
  maxElapsedMs?: number;
  /** Exponential backoff with full jitter between these (defaults 200 and 5 000 ms). */
  initialIntervalMs?: number;
  maxIntervalMs?: number;
  /** Told about each retry before its wait. */
  onRetry?: (reason: string, waitMs: number) => void;
  /** Cancels the waits and the call. */
  signal?: AbortSignal;
}

const IN_PROGRESS = "IDEMPOTENCY_REQUEST_IN_PROGRESS";

/** What openapi-fetch resolves to: the response and, for errors, the parsed body. */
interface Result {
  response: Response;
  error?: unknown;
}

/**
 * Runs one logical call of an idempotent operation. The Idempotency-Key is
 * made once and sent on every attempt, so the server executes the operation
 * at most once however many attempts reach it. Network errors, 5xx and
 * `409 IDEMPOTENCY_REQUEST_IN_PROGRESS` (after `Retry-After`) are retried
 * with backoff until the deadline; `409 IDEMPOTENCY_KEY_REUSED` and every
 * other 4xx are returned at once: no retry can fix them.
 *
 * When the deadline passes on a retryable answer, that answer is returned;
 * on a network error, the error is thrown.
 */
export async function idempotent<R extends Result>(
  call: (idempotencyKey: string) => Promise<R>,
  policy: RetryPolicy = {},
  idempotencyKey: string = globalThis.crypto.randomUUID(),
): Promise<R> {
  const maxElapsed = policy.maxElapsedMs ?? 30_000;
  const initial = policy.initialIntervalMs ?? 200;
  const maxInterval = policy.maxIntervalMs ?? 5_000;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    let result: R | undefined;
    let failure: unknown;
    try {
      result = await call(idempotencyKey);
    } catch (err) {
      if (policy.signal?.aborted) {
        throw err;
      }
      failure = err; // the network: the request may or may not have arrived
    }
    let reason: string;
    let retryAfterMs: number | undefined;
    if (result !== undefined) {
      const why = retryReason(result);
      if (why === undefined) {
        return result;
      }
      reason = why;
      retryAfterMs = parseRetryAfter(result.response.headers.get("Retry-After"));
    } else {
      reason = `network: ${String(failure)}`;
    }
    const wait = retryAfterMs ?? jitter(initial, maxInterval, attempt);
    if (Date.now() - started + wait > maxElapsed) {
      if (result !== undefined) {
        return result;
      }
      throw failure;
    }
    policy.onRetry?.(reason, wait);
    await sleep(wait, policy.signal);
  }
}

/** Why an answer is worth sending again with the same key, or undefined. */
function retryReason(result: Result): string | undefined {
  const status = result.response.status;
  if (status >= 500) {
    return `status ${status}`;
  }
  const code = (result.error as Partial<Problem> | undefined)?.code;
  if (status === 409 && code === IN_PROGRESS) {
    return IN_PROGRESS;
  }
  return undefined;
}

function parseRetryAfter(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) {
    return undefined;
  }
  return Number(header.trim()) * 1000;
}

function jitter(initial: number, max: number, attempt: number): number {
  const ceiling = Math.min(max, initial * 2 ** attempt);
  return Math.random() * ceiling;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}
