/**
 * Opens a subscription WebSocket from Node with the bearer token in the `Authorization`
 * header (Node's WebSocket, from undici, accepts headers), so it works with every token
 * the server accepts today.
 */
import { opened, toWs } from "../../client/runtime.ts";
import type { OpenSocket } from "../../shared/client/runtime.ts";

// undici's WebSocket takes an options object where the web API takes protocols.
export const openSocketWithHeaders: OpenSocket = (url, token) =>
  opened(new WebSocket(toWs(url), { headers: { authorization: `Bearer ${token}` } } as unknown as string[]));
