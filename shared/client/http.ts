/**
 * One connection to a Flux deployment: builds URLs, adds the bearer token, turns non-2xx
 * answers into {@link FluxClientError}, parses answers with the wire schemas, and retries
 * retryable failures of idempotent calls with full-jitter backoff.
 */
import type { z } from "zod";
import { backoffDelayMs, DEFAULT_BACKOFF, parseRetryAfter, type BackoffOptions } from "./backoff.ts";
import { errorFromAnswer, FluxClientError, networkError } from "./client-error.ts";
import { sleep, type ClientRuntime, type ResponseLike } from "./runtime.ts";

/** Where and how to connect. */
export interface ConnectionOptions {
  /** Base URL of the deployment, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** `FLUX_API_TOKEN`, or a scoped token. */
  token?: string;
  /** `FLUX_ADMIN_TOKEN`, for fault injection and minting tokens. */
  adminToken?: string;
  runtime: ClientRuntime;
  /** Attempts per idempotent call (default 5) and their backoff. */
  retry?: { maxAttempts?: number; backoff?: BackoffOptions };
}

/** Which token a call carries. */
export type Auth = "api" | "admin" | "none";

/** One call. `query` values that are undefined are left out. */
export interface CallOptions {
  auth?: Auth;
  body?: unknown;
  /** A body already serialized, sent with its own content type. */
  rawBody?: { text: string; contentType: string };
  headers?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  keepalive?: boolean;
}

/** HTTP for the SDK's typed calls. */
export class HttpClient {
  readonly runtime: ClientRuntime;
  readonly backoff: BackoffOptions;
  private readonly base: string;
  private readonly maxAttempts: number;
  private readonly options: ConnectionOptions;

  constructor(options: ConnectionOptions) {
    this.options = options;
    this.runtime = options.runtime;
    this.base = options.url.replace(/\/+$/, "");
    this.maxAttempts = options.retry?.maxAttempts ?? 5;
    this.backoff = options.retry?.backoff ?? DEFAULT_BACKOFF;
  }

  /** The absolute URL of `path` with its query string. */
  url(path: string, query: CallOptions["query"] = {}): string {
    const pairs = Object.entries(query).filter((entry): entry is [string, string | number] => entry[1] !== undefined);
    const search = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join("&");
    return `${this.base}${path}${search ? `?${search}` : ""}`;
  }

  /** The token a call with `auth` sends, if any. */
  token(auth: Auth): string | undefined {
    return auth === "api" ? this.options.token : auth === "admin" ? this.options.adminToken : undefined;
  }

  /** Sends once. @throws FluxClientError on a network failure or a non-2xx answer */
  async send(method: string, path: string, call: CallOptions = {}): Promise<ResponseLike> {
    const headers: Record<string, string> = { ...call.headers };
    const token = this.token(call.auth ?? "api");
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (call.rawBody) {
      body = call.rawBody.text;
      headers["content-type"] = call.rawBody.contentType;
    } else if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers["content-type"] = "application/json";
    }
    const url = this.url(path, call.query);
    let res: ResponseLike;
    try {
      res = await this.runtime.fetch(url, { method, headers, ...(body === undefined ? {} : { body }), ...(call.keepalive ? { keepalive: true } : {}) });
    } catch (err) {
      throw networkError(url, err);
    }
    if (res.status >= 200 && res.status < 300) return res;
    throw errorFromAnswer(res.status, await res.text().catch(() => ""), parseRetryAfter(res.headers.get("retry-after"), this.runtime.now()));
  }

  /**
   * Sends and parses the JSON answer with `schema`, retrying retryable failures up to
   * the configured attempts (only for calls that are safe to repeat).
   */
  async json<S extends z.ZodType>(schema: S, method: string, path: string, call: CallOptions = {}): Promise<z.output<S>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return parseAnswer(schema, await this.send(method, path, call));
      } catch (err) {
        if (!(err instanceof FluxClientError) || !err.retryable || attempt + 1 >= this.maxAttempts) throw err;
        await sleep(this.runtime, backoffDelayMs(attempt, this.backoff, this.runtime.random(), err.retryAfterMs));
      }
    }
  }
}

/** Parses a 2xx answer's JSON body. @throws FluxClientError `BAD_RESPONSE` when it does not fit */
export async function parseAnswer<S extends z.ZodType>(schema: S, res: ResponseLike): Promise<z.output<S>> {
  const text = await res.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new FluxClientError(res.status, "BAD_RESPONSE", `answer is not JSON: ${text.slice(0, 200)}`, { cause });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new FluxClientError(res.status, "BAD_RESPONSE", `answer does not fit the API: ${parsed.error.message.slice(0, 300)}`);
  return parsed.data;
}
