/**
 * Live closed windows that resume by themselves: each window carries the cursor after
 * it, and whenever the stream ends (the server's `maxMs`), drops or fails over, the
 * subscription reconnects from the last cursor, so the caller sees every window exactly
 * once (docs/API.md, "Subscribe"). Retryable failures back off; others are thrown.
 */
import { backoffDelayMs, type BackoffOptions } from "./backoff.ts";
import { FluxClientError } from "./client-error.ts";
import type { HttpClient } from "./http.ts";
import { sleep } from "./runtime.ts";
import { sseFrames } from "./sse-transport.ts";
import type { SubscribedWindow } from "./subscription-frame.ts";
import { socketFrames } from "./socket-transport.ts";

/** How to subscribe. */
export interface SubscribeOptions {
  /** Start after this cursor (`0,12,3`); absent: from the first window. */
  cursor?: string;
  /** `sse` (default; fetch streaming, works everywhere) or `websocket` (needs `runtime.openSocket`). */
  transport?: "sse" | "websocket";
  /** How long one connection streams before the server ends it, ms (default 60,000). */
  maxMs?: number;
  /** Backoff between failed reconnects (default 250 ms up to 5 s). */
  backoff?: BackoffOptions;
  /** Told about each failed connection before the wait for the next. */
  onReconnect?(error: FluxClientError, failures: number, delayMs: number): void;
  /** Checked between connections and windows: true stops the subscription. */
  stopped?(): boolean;
}

const SUBSCRIBE_BACKOFF: BackoffOptions = { baseMs: 250, maxMs: 5_000 };

/**
 * Yields closed windows of `dataflow` for as long as the caller iterates (or until
 * `stopped()`), reconnecting from the last cursor. Break out of the loop to stop.
 * @throws FluxClientError for refusals that reconnecting cannot fix (400, 401, 403, 404)
 */
export async function* subscribe(http: HttpClient, dataflow: string, options: SubscribeOptions = {}): AsyncGenerator<SubscribedWindow> {
  let cursor = options.cursor;
  let failures = 0;
  const connect = options.transport === "websocket" ? socketFrames : sseFrames;
  while (!options.stopped?.()) {
    let delivered = false;
    try {
      for await (const frame of connect(http, dataflow, cursor, options.maxMs ?? 60_000)) {
        failures = 0;
        delivered = true;
        cursor = frame.cursor;
        if (frame.type === "window") yield frame.window;
        if (options.stopped?.()) return;
      }
      // A connection that ended with nothing in it waits before the next, so a server
      // or proxy that ends responses at once is not called in a tight loop.
      if (!delivered) await sleep(http.runtime, backoffDelayMs(failures++, options.backoff ?? SUBSCRIBE_BACKOFF, http.runtime.random()));
    } catch (err) {
      if (!(err instanceof FluxClientError) || !err.retryable) throw err;
      const delayMs = backoffDelayMs(failures, options.backoff ?? SUBSCRIBE_BACKOFF, http.runtime.random(), err.retryAfterMs);
      failures++;
      options.onReconnect?.(err, failures, delayMs);
      await sleep(http.runtime, delayMs);
    }
  }
}
