/**
 * The default platform for the client, from globals that Node ≥ 20, browsers and Workers
 * share (`fetch`, `setTimeout`, `TextDecoder`, `WebSocket`), and two ways to open an
 * authenticated subscription socket.
 */
import { errorFromAnswer } from "../shared/client/client-error.ts";
import type { ClientRuntime, OpenSocket, ResponseLike, SocketLike } from "../shared/client/runtime.ts";

/** The structural part of a web WebSocket that {@link adaptSocket} uses. */
interface WebSocketish {
  addEventListener(type: "message", fn: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", fn: (event: { code: number; reason: string }) => void): void;
  close(code?: number, reason?: string): void;
}

/** The runtime of the current platform; `overrides` replace parts of it (tests, custom fetch). */
export function defaultRuntime(overrides: Partial<ClientRuntime> = {}): ClientRuntime {
  return {
    fetch: (url, init) => fetch(url, init) as Promise<ResponseLike>,
    now: () => Date.now(),
    setTimer: (fn, ms) => {
      const handle = setTimeout(fn, ms);
      return () => clearTimeout(handle);
    },
    random: () => Math.random(),
    utf8Decoder: () => {
      const decoder = new TextDecoder();
      return (chunk) => decoder.decode(chunk, { stream: true });
    },
    openSocket: openSocketWithProtocols,
    ...overrides,
  };
}

/**
 * Browsers (which cannot set headers on a WebSocket): offers the protocols `flux.v1` and
 * `flux-token.<token>`; the server selects `flux.v1`. Needs a server that accepts
 * tokens this way (scoped tokens, issue 13 part 4).
 */
const openSocketWithProtocols: OpenSocket = (url, token) =>
  opened(new WebSocket(toWs(url), ["flux.v1", `flux-token.${token}`]) as unknown as WebSocketish & { addEventListener(type: "open" | "error", fn: () => void): void });

/** What a Workers `fetch` answers to an upgrade request. */
interface UpgradeResponse {
  readonly status: number;
  readonly webSocket?: (WebSocketish & { accept(): void }) | null;
  text(): Promise<string>;
}

/** Workers (and any platform whose `fetch` upgrades): a GET with `Upgrade: websocket` and the bearer header. */
export function openSocketThroughFetch(fetchUpgrade: (url: string, init: { headers: Record<string, string> }) => Promise<UpgradeResponse>): OpenSocket {
  return async (url, token) => {
    const res = await fetchUpgrade(url, { headers: { upgrade: "websocket", authorization: `Bearer ${token}` } });
    const socket = res.webSocket;
    if (res.status !== 101 || !socket) throw errorFromAnswer(res.status, await res.text(), null);
    socket.accept();
    return adaptSocket(socket);
  };
}

/** The WebSocket URL of an http(s) URL. */
export function toWs(url: string): string {
  return url.replace(/^http/, "ws");
}

/**
 * Resolves once the socket is open; a socket that fails first rejects with a retryable
 * disconnect (its `close` or, as Node's WebSocket after a refused handshake, only `error`).
 * The subscription then asks over HTTP why (`socket-transport.ts`).
 */
export function opened(socket: WebSocketish & { addEventListener(type: "open" | "error", fn: () => void): void }): Promise<SocketLike> {
  return new Promise((resolve, reject) => {
    let settled = false;
    socket.addEventListener("open", () => {
      settled = true;
      resolve(adaptSocket(socket));
    });
    socket.addEventListener("close", (event) => {
      if (!settled) reject(errorFromAnswer(503, `the WebSocket closed before opening (${event.code} ${event.reason})`, null));
      settled = true;
    });
    socket.addEventListener("error", () => {
      if (!settled) reject(errorFromAnswer(503, "the WebSocket failed before opening", null));
      settled = true;
    });
  });
}

/** Wraps a web WebSocket as the SDK's {@link SocketLike}. */
function adaptSocket(socket: WebSocketish): SocketLike {
  return {
    onMessage: (handler) => socket.addEventListener("message", (event) => handler(typeof event.data === "string" ? event.data : String(event.data))),
    onClose: (handler) => socket.addEventListener("close", (event) => handler(event.code, event.reason)),
    close: (code, reason) => {
      try {
        socket.close(code, reason);
      } catch {
        // already closed
      }
    },
  };
}
