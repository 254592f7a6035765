/**
 * What the client needs from its platform, passed in so the SDK stays pure (STYLE.md §1):
 * HTTP, a clock, timers, randomness and text decoding. `client/runtime.ts` builds one from
 * the globals every target has (Node ≥ 20, browsers, Workers); tests pass fakes.
 */

/** Headers of a response: only lookup is needed. */
interface HeadersLike {
  get(name: string): string | null;
}

/** A response body read chunk by chunk (a web `ReadableStream<Uint8Array>`). */
interface BodyLike {
  getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(reason?: unknown): Promise<void> };
}

/** The part of a fetch `Response` the client reads. */
export interface ResponseLike {
  readonly status: number;
  readonly headers: HeadersLike;
  readonly body: BodyLike | null;
  text(): Promise<string>;
}

/** Request options the client sets. `keepalive` lets a request outlive a page being closed. */
export interface RequestOptions {
  method: string;
  headers: Record<string, string>;
  body?: string;
  keepalive?: boolean;
}

/** A `fetch`. It rejects on network failure, as `fetch` does. */
export type FetchLike = (url: string, init: RequestOptions) => Promise<ResponseLike>;

/** An open WebSocket, reduced to what a subscription uses. */
export interface SocketLike {
  onMessage(handler: (text: string) => void): void;
  /** Called once, when the socket closes or fails; `code` is the close code (1006 for a failure). */
  onClose(handler: (code: number, reason: string) => void): void;
  close(code?: number, reason?: string): void;
}

/**
 * Opens a WebSocket to `url` that authenticates with `token` (offering the protocols
 * `flux.v1` and `flux-token.<token>`, or however the platform can send it). Rejects
 * with the HTTP error when the server refuses the upgrade.
 */
export type OpenSocket = (url: string, token: string) => Promise<SocketLike>;

/** Platform services. Times are epoch milliseconds. */
export interface ClientRuntime {
  fetch: FetchLike;
  /** Wall-clock time, ms. */
  now(): number;
  /** Runs `fn` after `ms`; the returned function cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
  /** A uniform number in [0, 1). */
  random(): number;
  /** Makes a streaming UTF-8 decoder: each call decodes one chunk, keeping split characters for the next. */
  utf8Decoder(): (chunk: Uint8Array) => string;
  /** Opens a WebSocket; absent where the platform has none. */
  openSocket?: OpenSocket;
}

/** Resolves after `ms`, or earlier when `wake` fires. */
export function sleep(runtime: ClientRuntime, ms: number, wake?: Wake): Promise<void> {
  return new Promise((resolve) => {
    const cancel = runtime.setTimer(() => {
      wake?.remove(done);
      resolve();
    }, Math.max(0, ms));
    const done = () => {
      cancel();
      resolve();
    };
    wake?.add(done);
  });
}

/** Wakes every sleeper registered with it: lets `close()` or new work cut a wait short. */
export class Wake {
  private readonly sleepers = new Set<() => void>();

  add(fn: () => void): void {
    this.sleepers.add(fn);
  }

  remove(fn: () => void): void {
    this.sleepers.delete(fn);
  }

  /** Wakes everyone now waiting. */
  fire(): void {
    const now = [...this.sleepers];
    this.sleepers.clear();
    for (const fn of now) fn();
  }
}
