/**
 * The client SDK against the real Worker and Durable Objects in workerd (issue 13): a
 * producer posting through a primary crash gets every event counted exactly once, a
 * producer restarted on its store resends its pending batch without doubling it, and SDK
 * subscriptions (SSE and WebSocket) resume across the fail-over with no gap or repeat.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../shared/client/producer-store.ts";
import type { SubscribedWindow } from "../../shared/client/subscription-frame.ts";
import { createDataflow, subscribe } from "../helpers/api.ts";
import { expectExact, failOverWhilePosting, faultSpec, outputLabel, routing, SUBSCRIBED_PAGES, subscribedDataflow, tickUntilHealthy, type Event } from "../helpers/fault-client.ts";
import { sdkClient } from "../helpers/sdk-client.ts";

const events = (n: number, from = 0): Event[] => Array.from({ length: n }, (_, i) => ({ page: `page-${(from + i) % 9}`, ts: 1_000 + (from + i) * 7, bytes: from + i }));

describe("client SDK in workerd", () => {
  it("a producer posting through a primary crash gets every event counted exactly once", async () => {
    const { id, stream } = await createDataflow(faultSpec);
    const client = sdkClient();
    const retries: string[] = [];
    const producer = await client.producer({ stream, producerId: "sdk-1", maxBatchEvents: 10, lingerMs: 1, backoff: { baseMs: 1, maxMs: 20 }, onRetry: (e) => retries.push(e.code) });
    const all = events(160);
    for (const [i, e] of all.entries()) {
      await producer.send(e);
      if (i === 80) {
        await producer.flush();
        const primary = (await routing(id))[0]?.primary ?? "";
        expect((await client.fault(primary, "crash")).injected).toBe("crash");
      }
    }
    await producer.close();
    expect(retries.length, "the crash must have made some posts fail").toBeGreaterThan(0);
    expect(producer.totals).toMatchObject({ events: 160, rejectedBatches: 0 });
    await tickUntilHealthy(id);
    await expectExact(id, stream, [all]);
  }, 30_000); // about 5 s alone; far more on a loaded machine

  it("a producer restarted on its store resends the pending batch with its seq: nothing lost or doubled", async () => {
    const { id, stream } = await createDataflow(faultSpec);
    const client = sdkClient();
    const store = new MemoryStore();
    // Both producers linger far longer than their sends take, so batches fill by count whatever the machine's load:
    // with 1 ms here, a loaded CI run flushed one of the first 20 events early (seven batches of the same 30 events).
    const first = await client.producer({ stream, producerId: "sdk-2", store, maxBatchEvents: 5, lingerMs: 5_000 });
    for (const e of events(20)) await first.send(e);
    await first.flush();
    // The process dies after saving batch 5 and sending it, before hearing the answer.
    const saved = first.state;
    const pending = { seq: saved.nextSeq, events: events(5, 20).map((e) => JSON.stringify(e)) };
    const res = await client.http.send("POST", `/v1/streams/${stream}/events`, { rawBody: { text: `[${pending.events.join(",")}]`, contentType: "application/json" }, headers: { "flux-producer-id": "sdk-2", "flux-seq": String(pending.seq) } });
    expect(res.status).toBe(200);
    await store.save({ ...saved, pending, nextSeq: pending.seq + 1 });

    // A linger far longer than the sends take: the five new events fill one batch by count, whatever the machine's load
    // (with 1 ms, a loaded machine flushed part of them early, making seven batches of the same 30 events).
    const second = await client.producer({ stream, store, maxBatchEvents: 5, lingerMs: 5_000 });
    for (const e of events(5, 25)) await second.send(e);
    await second.close();
    expect(second.totals).toMatchObject({ batches: 6, events: 30, duplicateBatches: 1 });
    await expectExact(id, stream, [events(30)]);
  });

  for (const transport of ["sse", "websocket"] as const) {
    it(`an SDK subscription over ${transport} resumes across the fail-over by itself: every window once`, async () => {
      const { id, post } = await subscribedDataflow();
      const client = sdkClient();
      const seen: SubscribedWindow[] = [];
      let stop = false;
      const expected = SUBSCRIBED_PAGES.length * 5;
      // Short connections, so it reconnects several times, also while the partition fails over.
      const reading = (async () => {
        for await (const w of client.subscribe(id, { transport, maxMs: 150, stopped: () => stop })) {
          seen.push(w);
          if (seen.length >= expected) return;
        }
      })();
      await failOverWhilePosting(id, post);
      const deadline = Date.now() + 10_000;
      while (seen.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      stop = true;
      await reading;
      const labels = seen.map(outputLabel);
      expect(new Set(labels).size).toBe(labels.length);
      const everything = (await subscribe(id, 200)).map((e) => outputLabel(e.data));
      expect(labels.sort()).toEqual(everything.sort());
      expect(everything).toHaveLength(expected);
    });
  }

  it("reports fault injection on an unknown replica as a 404 FluxClientError", async () => {
    await expect(sdkClient().fault("nope/p0/g0", "crash")).rejects.toMatchObject({ status: 404, code: "NOT_FOUND", retryable: false });
  });
});
