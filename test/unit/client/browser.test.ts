/** The browser helpers with stand-ins for localStorage and document: the store survives a new producer, hidden pages send with keepalive. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { deliverWhenHidden, LocalStorageStore } from "../../../client/browser.ts";
import { defaultRuntime } from "../../../client/runtime.ts";
import { FluxClient } from "../../../shared/client/flux-client.ts";
import { FakeIngestServer } from "../../helpers/fake-ingest-server.ts";

afterEach(() => {
  vi.useRealTimers();
});

class FakeStorage {
  readonly items = new Map<string, string>();
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
}

class FakeDocument extends EventTarget {
  visibilityState = "visible";
}

describe("browser helpers", () => {
  it("a producer on a LocalStorageStore resumes its seq and pending batch after a reload", async () => {
    vi.useFakeTimers();
    const server = new FakeIngestServer(() => Date.now());
    const client = new FluxClient({ url: "http://flux.test", token: "t", runtime: defaultRuntime({ fetch: server.fetch }) });
    const storage = new FakeStorage();
    server.next({ kind: "lose-answer" }, { kind: "hang" });
    const first = await client.producer({ stream: "s", store: new LocalStorageStore("flux:s", storage) });
    await first.send({ a: 1 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(JSON.parse(storage.getItem("flux:s") ?? "{}")).toMatchObject({ nextSeq: 2, pending: { seq: 1, events: ['{"a":1}'] } });

    const reloaded = await client.producer({ stream: "s", store: new LocalStorageStore("flux:s", storage) });
    await reloaded.send({ a: 2 });
    await reloaded.close();
    expect(server.applied).toEqual([{ a: 1 }, { a: 2 }]);
    expect(server.requests.map((r) => r.seq)).toEqual([1, 1, 1, 2]);
  });

  it("switches the producer to keepalive delivery while the page is hidden", async () => {
    const server = new FakeIngestServer(() => Date.now());
    const client = new FluxClient({ url: "http://flux.test", token: "t", runtime: defaultRuntime({ fetch: server.fetch }) });
    const producer = await client.producer({ stream: "s", lingerMs: 60_000 });
    const doc = new FakeDocument();
    const stop = deliverWhenHidden(producer, doc);
    doc.visibilityState = "hidden";
    doc.dispatchEvent(new Event("visibilitychange"));
    await producer.send({ a: 1 });
    await vi.waitFor(() => expect(server.requests).toHaveLength(1), { timeout: 2_000 });
    expect(server.requests[0]?.keepalive).toBe(true);
    stop();
    await producer.close();
  });
});
