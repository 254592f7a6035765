/**
 * One WebSocket connection of a subscription: `window` messages, then `end` and close
 * code 1000 when the server's `maxMs` is up. Any other close is a retryable disconnect.
 */
import { FluxClientError } from "./client-error.ts";
import { parseJson, subscribePath } from "./subscription-frame.ts";
import { SubscriptionMessageSchema } from "../wire/subscription.ts";
/** Streams the windows after `cursor` until the server sends `end` or the socket closes. */
export async function* socketFrames(http, dataflow, cursor, maxMs) {
    const open = http.runtime.openSocket;
    if (!open)
        throw new Error("this runtime has no WebSocket; subscribe with transport 'sse'");
    const socket = await open(http.url(subscribePath(dataflow), { cursor, maxMs }), http.token("api") ?? "");
    const items = [];
    let wake = null;
    const push = (item) => {
        items.push(item);
        wake?.();
    };
    socket.onMessage((text) => push({ text }));
    socket.onClose((closed, reason) => push({ closed, reason }));
    try {
        for (;;) {
            const item = items.shift() ?? (await new Promise((resolve) => (wake = resolve)).then(() => items.shift()));
            wake = null;
            if (!item)
                continue;
            if ("closed" in item)
                throw new FluxClientError(0, "DISCONNECTED", `the subscription socket closed (${item.closed} ${item.reason})`);
            const parsed = SubscriptionMessageSchema.safeParse(parseJson(item.text));
            if (!parsed.success)
                throw new FluxClientError(200, "BAD_RESPONSE", `a subscription message does not fit the API: ${parsed.error.message.slice(0, 200)}`);
            const message = parsed.data;
            if (message.type === "end")
                return yield { type: "end", cursor: message.cursor };
            const { type: _type, ...window } = message;
            yield { type: "window", cursor: message.cursor, window };
        }
    }
    finally {
        socket.close(1000, "done");
    }
}
