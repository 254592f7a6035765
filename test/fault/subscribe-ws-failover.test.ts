/** WebSocket subscribers across a primary fail-over get every closed window exactly once (issue 6). */
import { describe, expect, it } from "vitest";
import { subscribe } from "../helpers/api.ts";
import { failOverWhilePosting, outputLabel, SUBSCRIBED_PAGES, subscribedDataflow } from "../helpers/fault-client.ts";
import { MessageSchema, openSubscription, type Message } from "../helpers/websocket.ts";

/** Opens the subscription as a WebSocket and records every message and the close code. */
async function listen(id: string, query: string) {
  const ws = await openSubscription(id, query);
  const seen = { ws, messages: [] as Message[], closeCode: null as number | null };
  // Handlers return nothing: workerd warns about any value an event handler returns.
  ws.addEventListener("message", (event) => {
    seen.messages.push(MessageSchema.parse(JSON.parse(String(event.data))));
  });
  ws.addEventListener("close", (event) => {
    seen.closeCode = event.code;
  });
  return seen;
}

/** Waits until `done()` holds; fails after `deadlineMs`. */
async function until(done: () => boolean, what: string, deadlineMs = 3_000): Promise<void> {
  const deadlineAt = Date.now() + deadlineMs;
  while (!done()) {
    if (Date.now() > deadlineAt) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const windowLabels = (messages: readonly Message[]) => messages.flatMap((m) => (m.type === "window" ? [outputLabel(m)] : []));

describe("WebSocket subscription across a fail-over", () => {
  it("resumes on the new primary from an SSE cursor with no gap and no repeat", async () => {
    const { id, post } = await subscribedDataflow();
    const before = await subscribe(id, 200);
    expect(before.length).toBe(SUBSCRIBED_PAGES.length * 2);
    await failOverWhilePosting(id, post);

    const after = await listen(id, `?maxMs=300&cursor=${before.at(-1)?.id ?? ""}`);
    await until(() => after.closeCode !== null, "the server to close");
    expect(after.closeCode).toBe(1000);
    expect(after.messages.at(-1)?.type).toBe("end");

    const seen = [...before.map((e) => outputLabel(e.data)), ...windowLabels(after.messages)];
    expect(new Set(seen).size).toBe(seen.length);
    const everything = (await subscribe(id, 200)).map((e) => outputLabel(e.data));
    expect(everything).toHaveLength(SUBSCRIBED_PAGES.length * 5);
    expect(seen.sort()).toEqual(everything.sort());
  });

  it("keeps one open WebSocket going through the fail-over with no gap and no repeat", async () => {
    const { id, post } = await subscribedDataflow();
    const live = await listen(id, "?maxMs=20000");
    try {
      await until(() => live.messages.length >= SUBSCRIBED_PAGES.length * 2, "the windows closed before the crash");
      await failOverWhilePosting(id, post);
      const everything = (await subscribe(id, 200)).map((e) => outputLabel(e.data));
      expect(everything).toHaveLength(SUBSCRIBED_PAGES.length * 5);
      await until(() => live.messages.length >= everything.length, "the windows closed after the fail-over");
      // A late repeat would show up after the last expected window; give it a few polls.
      await new Promise((resolve) => setTimeout(resolve, 600));
      const seen = windowLabels(live.messages);
      expect(live.closeCode).toBeNull();
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.sort()).toEqual(everything.sort());
    } finally {
      live.ws.close(1000, "done");
    }
  });
});
