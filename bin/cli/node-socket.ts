/**
 * Opens a subscription WebSocket from Node with the bearer token in the `Authorization`
 * header (Node's WebSocket, from undici, accepts headers), so it works with every token
 * the server accepts today.
 */
import { adaptSocket } from "../../client/runtime.ts";
import { errorFromAnswer } from "../../shared/client/client-error.ts";
import type { OpenSocket } from "../../shared/client/runtime.ts";

export const openSocketWithHeaders: OpenSocket = (url, token) =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url.replace(/^http/, "ws"), { headers: { authorization: `Bearer ${token}` } } as unknown as string[]);
    let open = false;
    socket.addEventListener("open", () => {
      open = true;
      resolve(adaptSocket(socket));
    });
    socket.addEventListener("close", (event) => {
      if (!open) reject(errorFromAnswer(503, `the WebSocket closed before opening (${event.code} ${event.reason})`, null));
    });
  });
