/**
 * The closed list of Flux error codes, their HTTP status and whether a client may
 * retry. Every error that leaves the system uses one of these codes (STYLE.md §6).
 */
import { z } from "zod";

/** Error codes and how each maps onto HTTP. `retryable` tells clients whether resending can succeed. */
const ERROR_TABLE = {
  INVALID_REQUEST: { status: 400, retryable: false },
  INVALID_JSON: { status: 400, retryable: false },
  INVALID_EVENT: { status: 400, retryable: false },
  UNAUTHORIZED: { status: 401, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  UNKNOWN_STREAM: { status: 404, retryable: false },
  UNKNOWN_DATAFLOW: { status: 404, retryable: false },
  SPEC_CONFLICT: { status: 409, retryable: false },
  DATAFLOW_IN_USE: { status: 409, retryable: false },
  RESCALE_IN_PROGRESS: { status: 409, retryable: true },
  SEQ_TOO_OLD: { status: 409, retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false },
  INTERNAL: { status: 500, retryable: false },
  NOT_CONFIGURED: { status: 503, retryable: false },
  UNAVAILABLE: { status: 503, retryable: true },
  BACKPRESSURE: { status: 503, retryable: true },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** HTTP status codes that Flux errors use. */
export type ErrorStatus = (typeof ERROR_TABLE)[ErrorCode]["status"];

const ERROR_CODES = Object.keys(ERROR_TABLE) as [ErrorCode, ...ErrorCode[]];

/** The single error envelope every non-2xx response carries. */
export const ErrorEnvelopeSchema = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.unknown().optional() }),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

/** A failure with a Flux code; `details` is machine-readable context for the client. */
export class FluxError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FluxError";
    this.code = code;
    this.details = details;
  }

  /** The HTTP status from {@link ERROR_TABLE}. */
  get status(): ErrorStatus {
    return ERROR_TABLE[this.code].status;
  }

  /** Whether resending the same request can succeed (from {@link ERROR_TABLE}). */
  get retryable(): boolean {
    return ERROR_TABLE[this.code].retryable;
  }

  /** The replica `details` names (a call to it failed or was refused), if any: what a router reports to its monitor. */
  get replica(): string | undefined {
    const details = this.details;
    if (typeof details !== "object" || details === null || !("replica" in details)) return undefined;
    return typeof details.replica === "string" && details.replica !== "" ? details.replica : undefined;
  }

  /** The envelope to send; `details` is omitted when there are none. */
  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope["error"] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}
