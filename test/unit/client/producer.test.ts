/**
 * The client's producer against a fake ingest server, on fake timers: batching by count,
 * bytes and linger; resends with the same seq after 503s (honouring Retry-After) and lost
 * answers; backpressure; restart from the store; how each error is handled.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FluxClient } from "../../../shared/client/flux-client.ts";
import { MemoryStore } from "../../../shared/client/producer-store.ts";
import type { ProducerOptions } from "../../../shared/client/producer-options.ts";
import { defaultRuntime } from "../../../client/runtime.ts";
import { FakeIngestServer } from "../../helpers/fake-ingest-server.ts";

let server: FakeIngestServer;
let client: FluxClient;

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  server = new FakeIngestServer(() => Date.now());
  let seed = 7;
  // A fixed sequence instead of Math.random, so delays are reproducible.
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  client = new FluxClient({ url: "http://flux.test", token: "t", runtime: defaultRuntime({ fetch: server.fetch, random }) });
});
afterEach(() => {
  vi.useRealTimers();
});

const events = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ page: `p${(from + i) % 7}`, n: from + i }));
const open = (options: Partial<ProducerOptions> = {}) => client.producer({ stream: "clicks", producerId: "prod-1", ...options });

async function sendAll(producer: Awaited<ReturnType<typeof open>>, list: object[]): Promise<void> {
  for (const e of list) await producer.send(e);
}

describe("options", () => {
  it("refuses limits that could never cut a batch and a token request that cannot be valid, before sending anything", async () => {
    for (const bad of [{ maxBatchEvents: 0 }, { maxBatchEvents: Number.NaN }, { maxBatchBytes: -1 }, { lingerMs: 1.5 }, { maxQueuedEvents: 0 }]) {
      await expect(open(bad), JSON.stringify(bad)).rejects.toMatchObject({ name: "FluxClientError", status: 400, code: "INVALID_REQUEST", retryable: false });
    }
    await (await open({ lingerMs: 0 })).close();
    await expect(client.mintToken({ scope: "read", dataflows: [], ttlSeconds: 60 })).rejects.toMatchObject({ name: "FluxClientError", status: 400, code: "INVALID_REQUEST" });
    await expect(client.revokeToken("not-a-token-id")).rejects.toMatchObject({ name: "FluxClientError", status: 400, code: "INVALID_REQUEST" });
    expect(server.requests).toHaveLength(0);
  });
});

describe("batching", () => {
  it("cuts batches by count, numbering them 1, 2, 3, … and sends every event once", async () => {
    const producer = await open({ maxBatchEvents: 100, lingerMs: 1_000 });
    await sendAll(producer, events(1_000));
    await vi.advanceTimersByTimeAsync(0);
    await producer.close();
    expect(server.requests.map((r) => [r.seq, r.events])).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, 100]));
    expect(server.applied).toEqual(events(1_000));
    expect(server.requests.every((r) => r.producer === "prod-1" && r.authorization === "Bearer t")).toBe(true);
  });

  it("cuts batches by bytes: no body exceeds maxBatchBytes", async () => {
    const producer = await open({ maxBatchBytes: 1_000, lingerMs: 1_000 });
    const list = events(200);
    await sendAll(producer, list);
    await producer.close();
    const perEvent = JSON.stringify(list[0]).length;
    for (const r of server.requests) expect(2 + r.events * (perEvent + 1)).toBeLessThanOrEqual(1_000 + 20);
    expect(server.requests.length).toBeGreaterThan(200 / Math.floor(1_000 / (perEvent + 1)) - 1);
    expect(server.applied).toEqual(list);
  });

  it("holds a small batch for lingerMs, then sends it", async () => {
    const producer = await open({ lingerMs: 50 });
    await sendAll(producer, events(3));
    await vi.advanceTimersByTimeAsync(49);
    expect(server.requests).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(server.requests.map((r) => r.events)).toEqual([3]);
    await producer.close();
  });

  it("flush() sends at once and resolves when acknowledged", async () => {
    const producer = await open({ lingerMs: 60_000 });
    await sendAll(producer, events(5));
    await producer.flush();
    expect(server.applied).toHaveLength(5);
    expect(producer.totals).toMatchObject({ batches: 1, events: 5, duplicateBatches: 0 });
    await producer.close();
  });
});

describe("retries", () => {
  it("resends the same seq after 503s, waiting at least Retry-After each time", async () => {
    server.next({ kind: "status", status: 503, code: "UNAVAILABLE", retryAfter: "2" }, { kind: "status", status: 503, code: "UNAVAILABLE", retryAfter: "2" });
    const producer = await open();
    await sendAll(producer, events(4));
    const flushed = producer.flush();
    await vi.advanceTimersByTimeAsync(10_000);
    await flushed;
    expect(server.requests.map((r) => r.seq)).toEqual([1, 1, 1]);
    const [a, b, c] = server.requests.map((r) => r.atMs) as [number, number, number];
    expect(b - a).toBeGreaterThanOrEqual(2_000);
    expect(c - b).toBeGreaterThanOrEqual(2_000);
    expect(server.applied).toEqual(events(4));
    await producer.close();
  });

  it("backs off with full jitter (each wait below base · 2^attempt) on network failures", async () => {
    server.next(...Array.from({ length: 6 }, () => ({ kind: "network" as const })));
    const waits: number[] = [];
    const retried = await client.producer({ stream: "clicks", producerId: "prod-2", backoff: { baseMs: 100, maxMs: 10_000 }, onRetry: (_e, _a, ms) => waits.push(ms) });
    await retried.send({ page: "x" });
    const flushed = retried.flush();
    await vi.advanceTimersByTimeAsync(60_000);
    await flushed;
    expect(waits).toHaveLength(6);
    waits.forEach((ms, attempt) => expect(ms).toBeLessThan(100 * 2 ** attempt));
    expect(new Set(waits).size).toBeGreaterThan(1);
    expect(server.requests.map((r) => r.seq)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    await retried.close();
  });

  it("counts a batch once when its answer was lost and the resend comes back duplicate", async () => {
    server.next({ kind: "lose-answer" });
    const producer = await open();
    await sendAll(producer, events(3));
    const flushed = producer.flush();
    await vi.advanceTimersByTimeAsync(5_000);
    await flushed;
    expect(server.requests.map((r) => r.seq)).toEqual([1, 1]);
    expect(server.applied).toEqual(events(3));
    expect(producer.totals).toMatchObject({ batches: 1, events: 3, duplicateBatches: 1 });
    await producer.close();
  });
});

describe("restart from the store", () => {
  it("a new producer on the store resends the pending batch with its seq, then goes on: nothing lost or doubled", async () => {
    const store = new MemoryStore();
    server.next({ kind: "lose-answer" }, { kind: "hang" });
    const first = await open({ store, lingerMs: 10, maxBatchEvents: 10 });
    await sendAll(first, events(10));
    await vi.advanceTimersByTimeAsync(5_000); // applied, answer lost; the resend hangs: the process "dies" here
    expect((await store.load())?.pending?.seq).toBe(1);

    const second = await open({ store, producerId: "ignored", lingerMs: 10, maxBatchEvents: 10 });
    expect(second.producerId).toBe("prod-1");
    await sendAll(second, events(10, 10));
    await second.close();
    expect(server.requests.map((r) => r.seq)).toEqual([1, 1, 1, 2]);
    expect(server.applied).toEqual(events(20));
    expect(second.totals).toMatchObject({ batches: 2, events: 20, duplicateBatches: 1 });
    expect((await store.load())?.pending).toBeNull();
  });

  it("abort() keeps the batch in flight pending for the next producer", async () => {
    const store = new MemoryStore();
    server.next({ kind: "status", status: 503, code: "UNAVAILABLE", retryAfter: "30" });
    const first = await open({ store, lingerMs: 10 });
    await sendAll(first, events(2));
    await vi.advanceTimersByTimeAsync(20);
    const aborted = first.abort();
    await vi.advanceTimersByTimeAsync(30_000);
    await aborted;
    const second = await open({ store });
    await second.close();
    expect(server.requests.map((r) => r.seq)).toEqual([1, 1]);
    expect(server.applied).toEqual(events(2));
  });
});

describe("backpressure and errors", () => {
  it("send() waits while the queue is full", async () => {
    server.next({ kind: "status", status: 503, code: "UNAVAILABLE", retryAfter: "5" });
    const producer = await open({ maxQueuedEvents: 4, maxBatchEvents: 2, lingerMs: 10 });
    await sendAll(producer, events(2));
    await vi.advanceTimersByTimeAsync(1); // batch 1 (2 events) in flight, waiting 5 s
    await sendAll(producer, events(4, 2));
    let sent = false;
    const fifth = producer.send({ page: "late" }).then(() => (sent = true));
    await vi.advanceTimersByTimeAsync(4_000);
    expect(sent).toBe(false);
    await vi.advanceTimersByTimeAsync(2_000);
    await fifth;
    await producer.close();
    expect(server.applied).toHaveLength(7);
  });

  it("drops a batch refused with 400 (nothing applied), reports it and sends the next with the next seq", async () => {
    server.next({ kind: "status", status: 400, code: "INVALID_EVENT" });
    const rejected: number[] = [];
    const producer = await open({ lingerMs: 10, maxBatchEvents: 2, onRejected: (batch, error) => rejected.push(batch.seq, error.status) });
    await sendAll(producer, events(4));
    await producer.close();
    expect(rejected).toEqual([1, 400]);
    expect(server.requests.map((r) => r.seq)).toEqual([1, 2]);
    expect(server.applied).toEqual(events(4).slice(2));
  });

  it("stops on SEQ_TOO_OLD, keeping the batch pending, and flush() rejects with the code", async () => {
    server.next({ kind: "status", status: 409, code: "SEQ_TOO_OLD" });
    const store = new MemoryStore();
    const producer = await open({ store, lingerMs: 0 });
    await sendAll(producer, events(2));
    await expect(producer.flush()).rejects.toMatchObject({ code: "SEQ_TOO_OLD", status: 409 });
    await expect(producer.send({})).rejects.toMatchObject({ code: "SEQ_TOO_OLD" });
    expect((await store.load())?.pending?.seq).toBe(1);
  });

  it("stops with the store's error when saving fails, before sending the batch", async () => {
    const store = new MemoryStore();
    const producer = await open({ store, lingerMs: 10 });
    store.save = async () => {
      throw new Error("disk full");
    };
    await sendAll(producer, events(2));
    await vi.advanceTimersByTimeAsync(20);
    await expect(producer.flush()).rejects.toThrow("disk full");
    expect(server.requests).toHaveLength(0);
  });

  it("stops on 401 without retrying", async () => {
    server.next({ kind: "status", status: 401, code: "UNAUTHORIZED" });
    const producer = await open({ lingerMs: 0 });
    await sendAll(producer, events(1));
    await expect(producer.flush()).rejects.toMatchObject({ code: "UNAUTHORIZED", retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it("sums the late and filtered record counts of the answers", async () => {
    server.recordCounts = (list) => ({ accepted: list.length - 1, filtered: 1, late: 0 });
    const producer = await open({ maxBatchEvents: 5, lingerMs: 10 });
    await sendAll(producer, events(10));
    await producer.close();
    expect(producer.totals).toMatchObject({ batches: 2, events: 10, accepted: 8, filtered: 2, late: 0 });
  });

  it("sends at once with keepalive while the page is hidden", async () => {
    const producer = await open({ lingerMs: 60_000 });
    producer.setHidden(true);
    await sendAll(producer, events(3));
    await vi.advanceTimersByTimeAsync(0);
    expect(server.requests.map((r) => r.keepalive)).toContain(true);
    await producer.close();
    expect(server.applied).toEqual(events(3));
  });
});
