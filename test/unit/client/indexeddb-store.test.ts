/**
 * IndexedDbStore over an in-memory stand-in for the part of IndexedDB it uses: a write is
 * visible (durable) only once its transaction completes, and the producer sends nothing
 * before that. The real thing runs in Chromium in test/browser/indexeddb-store.test.ts.
 */
import { describe, expect, it, vi } from "vitest";
import { IndexedDbStore } from "../../../client/indexeddb-store.ts";
import { defaultRuntime } from "../../../client/runtime.ts";
import { FluxClient } from "../../../shared/client/flux-client.ts";
import { freshProducerState } from "../../../shared/client/producer-store.ts";
import { FakeIndexedDb } from "../../helpers/fake-indexeddb.ts";
import { FakeIngestServer } from "../../helpers/fake-ingest-server.ts";

function setUp() {
  const server = new FakeIngestServer(() => Date.now());
  const client = new FluxClient({ url: "http://flux.test", token: "t", runtime: defaultRuntime({ fetch: server.fetch }) });
  const idb = new FakeIndexedDb();
  return { server, client, idb, store: () => new IndexedDbStore("flux:s", { indexedDB: idb }) };
}

describe("IndexedDbStore", () => {
  it("a reopened producer resends its pending batch with the same seq, then goes on", async () => {
    const { server, client, idb, store } = setUp();
    server.next({ kind: "hang" });
    const first = await client.producer({ stream: "s", store: store() });
    await first.send({ a: 1 }, 1);
    await vi.waitFor(() => expect(server.requests).toHaveLength(1), { timeout: 2_000 });
    expect(JSON.parse(String(idb.committed.get("flux-producers/producer-states/flux:s")))).toMatchObject({ nextSeq: 2, pending: { seq: 1, tag: 1 } });

    const reloaded = await client.producer({ stream: "s", store: store() });
    expect(reloaded.producerId).toBe(first.producerId);
    await reloaded.send({ a: 2 }, 2);
    await reloaded.close();
    expect(server.applied).toEqual([{ a: 1 }, { a: 2 }]);
    expect(server.requests.map((r) => r.seq)).toEqual([1, 1, 2]);
    expect((await store().load())?.ackedTag).toBe(2);
  });

  it("sends a batch only after the transaction that saves it has completed", async () => {
    const { server, client, idb, store } = setUp();
    const producer = await client.producer({ stream: "s", store: store() });
    idb.holding = true;
    await producer.send({ a: 1 });
    const flushed = producer.flush();
    await new Promise((resolve) => setTimeout(resolve, 100)); // well past the 50 ms linger
    expect(server.requests).toHaveLength(0);
    idb.releaseCommits();
    await flushed;
    expect(server.requests.map((r) => r.seq)).toEqual([1]);
    await producer.close();
  });

  it("a transaction that aborts stops the producer with the IndexedDB error and sends nothing", async () => {
    const { server, client, idb, store } = setUp();
    const producer = await client.producer({ stream: "s", store: store() });
    idb.failNextCommit = true;
    await producer.send({ a: 1 });
    await expect(producer.flush()).rejects.toThrow("IndexedDB: saving flux:s failed: QuotaExceededError: the quota is exceeded");
    expect(server.requests).toHaveLength(0);
  });

  it("opens the database once, and again after the browser closed the connection", async () => {
    const idb = new FakeIndexedDb();
    const store = new IndexedDbStore("a", { indexedDB: idb });
    await store.save(freshProducerState("flux-a", "s"));
    await store.load();
    expect(idb.connections).toHaveLength(1);
    idb.connections[0]?.onclose?.();
    expect((await store.load())?.producerId).toBe("flux-a");
    expect(idb.connections).toHaveLength(2);
  });

  it("keeps producers under different keys apart and refuses a value that is not a saved state", async () => {
    const idb = new FakeIndexedDb();
    const a = new IndexedDbStore("a", { indexedDB: idb, database: "app" });
    await a.save(freshProducerState("flux-a", "s"));
    expect(await new IndexedDbStore("b", { indexedDB: idb, database: "app" }).load()).toBeNull();
    expect((await a.load())?.producerId).toBe("flux-a");
    idb.committed.set("app/producer-states/c", { not: "text" });
    await expect(new IndexedDbStore("c", { indexedDB: idb, database: "app" }).load()).rejects.toThrow("holds a value of type object under c");
  });
});
