// The TypeScript client of the once API: `schema.d.ts` is generated from the
// committed spec by openapi-typescript (`npm run generate`; `make
// openapi-check` fails if it is stale), requests go through openapi-fetch,
// and two helpers are written by hand: `idempotent`, safe retries, and
// `waitForOperation`, which reads an operation with `?wait=` until it ends.
import createClient, { type Client, type ClientOptions, mergeHeaders } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };
export type Problem = components["schemas"]["Problem"];
export type Operation = components["schemas"]["Operation"];

/**
 * A typed client for the API at baseUrl, authenticated with a bearer token:
 * a user's token (a JWT from the identity provider, or one `once token`
 * made), or an API key (see createOnceClientWithAPIKey). Headers in options
 * are sent with every request, beside the Authorization header made from
 * token (which replaces an Authorization among them).
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

/** Starts every API key of once (`once_sk_`, a lookup id, the secret part). */
export const API_KEY_PREFIX = "once_sk_";

/**
 * A typed client for the API at baseUrl, authenticated with an API key, the
 * credential of a machine client (`POST /v1/api-keys` makes one), sent as the
 * bearer token. Throws for a key that does not start with API_KEY_PREFIX (a
 * user's token passed by mistake) rather than at the first request.
 */
export function createOnceClientWithAPIKey(baseUrl: string, apiKey: string, options: ClientOptions = {}): Client<paths> {
  if (!apiKey.startsWith(API_KEY_PREFIX)) {
    throw new TypeError(`an API key starts with ${API_KEY_PREFIX}`);
  }
  return createOnceClient(baseUrl, apiKey, options);
}

/** Bounds the retries of one logical call; every field has a default. */
export interface RetryPolicy {
  /** Deadline of the whole call, retries included (default 30 000 ms). */
  maxElapsedMs?: number;
  /**
   * Exponential backoff with full jitter between these (defaults 200 and
   * 5 000 ms). A `Retry-After` from the server replaces the backoff for that
   * wait, plus up to `initialIntervalMs` of jitter.
   */
  initialIntervalMs?: number;
  maxIntervalMs?: number;
  /** Told about each retry before its wait. */
  onRetry?: (reason: string, waitMs: number) => void;
  /**
   * Cancels the waits (and the call, if `call` passes it to its request).
   * A signal that times out (`AbortSignal.timeout`) is a deadline: during a
   * wait, it ends the call with the last answer.
   */
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
 * at most once however many attempts reach it. Network errors, 5xx, `429`
 * (a limit of the workspace: nothing ran) and `409
 * IDEMPOTENCY_REQUEST_IN_PROGRESS` are retried after the answer's
 * `Retry-After` (seconds or an HTTP-date), or else with backoff, until the
 * deadline; `409 IDEMPOTENCY_KEY_REUSED` and every other 4xx are returned
 * at once: no retry can fix them.
 *
 * When the next attempt could not start before the deadline
 * (`maxElapsedMs`, or a timed-out `signal` during a wait), the last answer
 * is returned at once: a 429 whose `Retry-After` lies past the deadline is
 * not waited for. When the last attempt got no answer, its error is thrown;
 * an aborted `signal` throws its reason.
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
  // The backoff's step; a Retry-After starts it over, as a fresh call.
  let step = 0;
  for (;;) {
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
      retryAfterMs = parseRetryAfter(result.response.headers.get("Retry-After"), Date.now());
    } else {
      reason = `network: ${String(failure)}`;
    }
    let wait: number;
    if (retryAfterMs !== undefined) {
      wait = retryAfterMs + Math.random() * initial;
      step = 0;
    } else {
      wait = jitter(initial, maxInterval, step++);
    }
    if (Date.now() - started + wait > maxElapsed) {
      if (result !== undefined) {
        return result;
      }
      throw failure;
    }
    policy.onRetry?.(reason, wait);
    try {
      await sleep(wait, policy.signal);
    } catch (err) {
      if (result !== undefined && isTimeout(err)) {
        return result; // the caller's deadline, as above
      }
      throw err;
    }
  }
}

/** The longest wait the server takes (longer ones are cut to it). */
const MAX_OPERATION_WAIT_MS = 25_000;

/** Bounds `waitForOperation`; every field has a default. */
export interface WaitOptions {
  /**
   * Deadline of the whole wait (default: none, as long as the operation
   * runs). Past it, `waitForOperation` throws an `OperationWaitTimeout`.
   */
  timeoutMs?: number;
  /** Cancels the wait: it throws the signal's reason. */
  signal?: AbortSignal;
}

/** The deadline passed before the operation ended. */
export class OperationWaitTimeout extends Error {
  override name = "OperationWaitTimeout";
  /** The last state read, if any. */
  readonly operation: Operation | undefined;
  constructor(id: string, operation: Operation | undefined) {
    super(`once: operation ${id} still ${operation?.status ?? "unread"} at the deadline`);
    this.operation = operation;
  }
}

/**
 * Reads the operation `id` until it is `succeeded`, `failed` or `cancelled`
 * and returns it. Each read asks the server to wait
 * (`GET /v1/operations/{id}?wait=`) up to 25 s or the time left, so the
 * answer comes as soon as the operation ends, whichever server the request reaches; a read answered before the
 * end (its wait was over) is followed by the next. Network errors, 5xx and
 * `429` (over the server's cap on waiting reads) are retried as
 * `idempotent` retries them, after `Retry-After`. Any other answer than 200
 * (404 for an unknown id) throws an Error that names its status.
 */
export async function waitForOperation(
  client: Client<paths>,
  id: string,
  options: WaitOptions = {},
): Promise<Operation> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  let last: Operation | undefined;
  for (;;) {
    options.signal?.throwIfAborted();
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new OperationWaitTimeout(id, last);
    }
    // Leave the answer a tenth of the time left (up to a second) to arrive
    // before the deadline.
    const waitMs = Math.max(1, Math.floor(Math.min(MAX_OPERATION_WAIT_MS, left - Math.min(left / 10, 1_000))));
    const res = await idempotent(
      () =>
        client.GET("/v1/operations/{id}", {
          params: { path: { id }, query: { wait: `${waitMs}ms` } },
          signal: options.signal,
        }),
      { maxElapsedMs: Number.isFinite(left) ? left : waitMs + 60_000, signal: options.signal },
    );
    if (res.response.status !== 200 || res.data === undefined) {
      throw new Error(`once: getOperation ${id}: ${res.response.status} ${JSON.stringify(res.error)}`);
    }
    last = res.data;
    if (last.status === "succeeded" || last.status === "failed" || last.status === "cancelled") {
      return last;
    }
  }
}

/** Why an answer is worth sending again with the same key, or undefined. */
function retryReason(result: Result): string | undefined {
  const status = result.response.status;
  const code = (result.error as Partial<Problem> | undefined)?.code;
  if (status >= 500 || status === 429) {
    return code === undefined ? `status ${status}` : `status ${status} ${code}`;
  }
  if (status === 409 && code === IN_PROGRESS) {
    return IN_PROGRESS;
  }
  return undefined;
}

/**
 * The wait a Retry-After asks for, in ms from now: delay-seconds or an
 * HTTP-date (zero when already past); undefined for anything else.
 */
function parseRetryAfter(header: string | null, now: number): number | undefined {
  const value = header?.trim() ?? "";
  if (/^\d+$/.test(value)) {
    return Number(value) * 1000;
  }
  // The three forms of HTTP-date: IMF-fixdate and RFC 850 name their zone,
  // GMT; asctime does not, and means GMT too. Date.parse alone would take
  // "1.5" for a date.
  let date: string;
  if (/^[A-Za-z]{3,9}, [\w -]+ \d\d:\d\d:\d\d GMT$/.test(value)) {
    date = value;
  } else if (/^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/.test(value)) {
    date = `${value} GMT`;
  } else {
    return undefined;
  }
  const at = Date.parse(date);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === "TimeoutError";
}

function jitter(initial: number, max: number, attempt: number): number {
  const ceiling = Math.min(max, initial * 2 ** attempt);
  return Math.random() * ceiling;
}

/** The longest delay setTimeout keeps (a longer one fires at once). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(resolve, Math.min(ms, MAX_TIMEOUT_MS));
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}
