/**
 * How the client reports a failed call: the server's error envelope (code, message,
 * details) with the HTTP status, or a network failure (status 0). `retryable` says
 * whether sending the same request again can succeed (docs/CLIENT.md, "Errors").
 */
import * as z from "zod";

/**
 * The error envelope, read tolerantly: a code this client does not know yet (a newer
 * server) is kept as text rather than refused.
 */
const EnvelopeSchema = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) });

/** A call that failed. `status` 0 means no HTTP answer (network failure, aborted). */
export class FluxClientError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  /** Wait the server asked for before a retry (`Retry-After`), ms, or null. */
  readonly retryAfterMs: number | null;

  constructor(status: number, code: string, message: string, options: { details?: unknown; retryAfterMs?: number | null; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "FluxClientError";
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }

  /**
   * Whether resending can succeed: network failures, `503 UNAVAILABLE` and the other
   * overload answers (429, 502, 503, 504), but not `503 NOT_CONFIGURED`.
   */
  get retryable(): boolean {
    if (this.status === 0) return true;
    if (this.code === "NOT_CONFIGURED") return false;
    return this.status === 429 || this.status === 502 || this.status === 503 || this.status === 504;
  }
}

/**
 * Builds the error for a non-2xx answer from its body text.
 * @param retryAfterMs from the `Retry-After` header, or null
 */
export function errorFromAnswer(status: number, bodyText: string, retryAfterMs: number | null): FluxClientError {
  let parsed: z.infer<typeof EnvelopeSchema> | null = null;
  try {
    const result = EnvelopeSchema.safeParse(JSON.parse(bodyText));
    if (result.success) parsed = result.data;
  } catch {
    // not JSON: a proxy or platform page, reported by status below
  }
  if (parsed) return new FluxClientError(status, parsed.error.code, parsed.error.message, { details: parsed.error.details, retryAfterMs });
  const code = status === 503 ? "UNAVAILABLE" : status >= 500 ? "INTERNAL" : "HTTP_ERROR";
  return new FluxClientError(status, code, `HTTP ${status}: ${bodyText.slice(0, 200) || "(empty body)"}`, { retryAfterMs });
}

/**
 * A call or option the SDK refuses before sending anything, as the server would refuse
 * such a request: `400 INVALID_REQUEST` (not retryable).
 */
export function invalidRequest(message: string, details?: unknown): FluxClientError {
  return new FluxClientError(400, "INVALID_REQUEST", message, { details });
}

/** Wraps a network failure (a rejected fetch). */
export function networkError(url: string, cause: unknown): FluxClientError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new FluxClientError(0, "NETWORK", `request to ${url} failed: ${reason}`, { cause });
}
