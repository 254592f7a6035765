/**
 * The CLI's exit codes, which scripts can rely on (docs/CLIENT.md, "Exit codes"), and
 * how a failure maps onto one.
 */
import { FluxClientError } from "../../shared/client/client-error.ts";

export const EXIT = {
  OK: 0,
  /** Anything unexpected (a bug, a server 500). */
  FAILURE: 1,
  /** Bad flags or arguments, or an input file that is not valid. */
  USAGE: 2,
  /** The server refused the request (4xx other than those below), e.g. SPEC_CONFLICT, INVALID_EVENT, SEQ_TOO_OLD. */
  REFUSED: 3,
  /** No such dataflow, stream, replica or route (404). */
  NOT_FOUND: 4,
  /** Missing, wrong or insufficient token (401, 403). */
  AUTH: 5,
  /** The server did not answer or stayed unavailable (network errors, 503) after retries. */
  UNAVAILABLE: 6,
  /** Stopped by Ctrl-C (SIGINT); `post` and `tail` resume where they were. */
  INTERRUPTED: 130,
} as const;

/** A problem with the command line or an input file. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The exit code for a failure. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError) return EXIT.USAGE;
  if (!(err instanceof FluxClientError)) return EXIT.FAILURE;
  if (err.status === 401 || err.status === 403) return EXIT.AUTH;
  if (err.status === 404) return EXIT.NOT_FOUND;
  if (err.retryable) return EXIT.UNAVAILABLE;
  if (err.status >= 400 && err.status < 500) return EXIT.REFUSED;
  return EXIT.FAILURE;
}
