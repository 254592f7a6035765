/** WebSocket subscribers across a primary fail-over get every closed window exactly once (issue 6). */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubscriptionEventSchema } from "../../shared/wire/subscription.ts";
import { call, createDataflow, subscribe } from "../helpers/api.ts";
import { fault, postUntilAcked, routing, tick, tickUntilHealthy } from "../helpers/fault-client.ts";

const MessageSchema = z.discriminatedUnion("type", [
  z.strictObject({ ...SubscriptionEventSchema.shape, type: z.literal("window"), cursor: z.string() }),
  z.strictObject({ type: z.literal("end"), cursor: z.string() }),
]);
type Message = z.infer<typeof MessageSchema>;

const PAGES = ["a", "b", "c", "d"];

/** Opens the subscription as a WebSocket and records every message and the close code. */
async function listen(id: string, query: string) {
  const res = await call("GET", `/v1/dataflows/${id}/subscribe${query}`, undefined, { upgrade: "websocket" });
  expect(res.status, res.status === 101 ? "" : await res.text()).toBe(101);
  const ws = res.webSocket;
  if (!ws) throw new Error("a 101 response without a WebSocket");
  ws.accept();
  const seen = { ws, messages: [] as Message[], closeCode: null as number | null };
  ws.addEventListener("message", (event) => seen.messages.push(MessageSchema.parse(JSON.parse(String(event.data)))));
  ws.addEventListener("close", (event) => (seen.closeCode = event.code));
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

const label = (e: { partition: number; outputSeq: number; key: string; windowStartMs: number }) => `${e.partition}:${e.outputSeq}:${e.key}@${e.windowStartMs}`;
const windowLabels = (messages: readonly Message[]) => messages.flatMap((m) => (m.type === "window" ? [label(m)] : []));

/** A two-partition dataflow with seconds 0..2 posted, and a function that posts more. */
async function started() {
  const { id, stream } = await createDataflow({ partitions: 2, window: { kind: "tumbling", sizeMs: 1_000 } });
  const post = (second: number) => postUntilAcked(stream, "p", second + 1, PAGES.map((page) => ({ page, ts: second * 1_000 + 5, bytes: 1 })));
  for (let second = 0; second < 3; second++) await post(second);
  return { id, post };
}

/** Crashes partition 0's primary, posts seconds 3..5 and waits for the fail-over to finish. */
async function failOverWhilePosting(id: string, post: (second: number) => Promise<unknown>): Promise<void> {
  const oldPrimary = (await routing(id))[0]?.primary ?? "";
  expect((await fault(oldPrimary, "crash")).status).toBe(200);
  for (let second = 3; second < 6; second++) await post(second);
  await tick();
  await tickUntilHealthy(id);
  expect((await routing(id))[0]?.primary).not.toBe(oldPrimary);
}

describe("WebSocket subscription across a fail-over", () => {
  it("resumes on the new primary from an SSE cursor with no gap and no repeat", async () => {
    const { id, post } = await started();
    const before = await subscribe(id, 200);
    expect(before.length).toBe(PAGES.length * 2);
    await failOverWhilePosting(id, post);

    const after = await listen(id, `?maxMs=300&cursor=${before.at(-1)?.id ?? ""}`);
    await until(() => after.closeCode !== null, "the server to close");
    expect(after.closeCode).toBe(1000);
    expect(after.messages.at(-1)?.type).toBe("end");

    const seen = [...before.map((e) => label(e.data)), ...windowLabels(after.messages)];
    expect(new Set(seen).size).toBe(seen.length);
    const everything = (await subscribe(id, 200)).map((e) => label(e.data));
    expect(everything).toHaveLength(PAGES.length * 5);
    expect(seen.sort()).toEqual(everything.sort());
  });

  it("keeps one open WebSocket going through the fail-over with no gap and no repeat", async () => {
    const { id, post } = await started();
    const live = await listen(id, "?maxMs=20000");
    try {
      await until(() => live.messages.length >= PAGES.length * 2, "the windows closed before the crash");
      await failOverWhilePosting(id, post);
      const everything = (await subscribe(id, 200)).map((e) => label(e.data));
      expect(everything).toHaveLength(PAGES.length * 5);
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
