/**
 * The ProducerStore contract (shared/client/producer-store.ts), run against every store: an
 * empty backing loads as null, and a new store over the same backing (a restart, a page
 * reload) loads exactly the last state saved, pending batch, tags and totals included.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileStore } from "../../../bin/cli/file-store.ts";
import { LocalStorageStore } from "../../../client/browser.ts";
import { IndexedDbStore } from "../../../client/indexeddb-store.ts";
import { freshProducerState, MemoryStore, type ProducerState, type ProducerStore } from "../../../shared/client/producer-store.ts";
import { FakeIndexedDb } from "../../helpers/fake-indexeddb.ts";

const dir = mkdtempSync(join(tmpdir(), "flux-store-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** Each store as a factory of instances over one backing: every call is a "restart" on the same data. */
const STORES: [string, () => () => ProducerStore][] = [
  ["MemoryStore", () => {
    const store = new MemoryStore();
    return () => store;
  }],
  ["LocalStorageStore", () => {
    const items = new Map<string, string>();
    const storage = { getItem: (key: string) => items.get(key) ?? null, setItem: (key: string, value: string) => void items.set(key, value) };
    return () => new LocalStorageStore("flux:s", storage);
  }],
  ["IndexedDbStore", () => {
    const idb = new FakeIndexedDb();
    return () => new IndexedDbStore("flux:s", { indexedDB: idb });
  }],
  ["FileStore", () => {
    const path = join(dir, `${++files}.json`);
    return () => new FileStore(path, { path: "input.ndjson", stream: "s", bytes: 10, lines: 2 });
  }],
];

const SENDING: ProducerState = { ...freshProducerState("flux-0123456789abcdef", "s"), nextSeq: 8, pending: { seq: 7, events: ['{"a":1}', '{"é":"ü"}'], tag: { line: 2 } }, ackedTag: { line: 0 } };

describe.each(STORES)("%s (the ProducerStore contract)", (_name, backing) => {
  it("loads null when nothing was saved", async () => {
    expect(await backing()().load()).toBeNull();
  });

  it("a new store over the same backing loads the last state saved, pending batch and tags included", async () => {
    const open = backing();
    await open().save(freshProducerState("flux-0123456789abcdef", "s"));
    await open().save(SENDING);
    expect(await open().load()).toEqual(SENDING);
    const settled: ProducerState = { ...SENDING, pending: null, ackedTag: { line: 2 }, totals: { ...SENDING.totals, batches: 1, events: 2, duplicateBatches: 1 } };
    await open().save(settled);
    expect(await open().load()).toEqual(settled);
  });
});
