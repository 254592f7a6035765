/**
 * The SDK's browser entry point (its size budget: docs/CLIENT.md, "Bundle size"):
 * `createFluxClient`, the producer stores `IndexedDbStore` (`indexeddb-store.ts`) and
 * `LocalStorageStore` (written synchronously, so a batch is saved before it is sent even if
 * the tab dies right after), and delivery while the page is hidden or closed through
 * `keepalive` requests. `navigator.sendBeacon` is not used: it cannot send the producer
 * headers and bearer token that ingest requires.
 */
import { parseProducerState, type ProducerState, type ProducerStore } from "../shared/client/producer-store.ts";
import type { Producer } from "../shared/client/producer.ts";

export { createFluxClient } from "./flux.ts";
export { IndexedDbStore } from "./indexeddb-store.ts";

/** The part of the Web Storage API the store uses. */
interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** The part of `document` that {@link deliverWhenHidden} listens to. */
interface DocumentLike {
  readonly visibilityState: string;
  addEventListener(type: string, fn: () => void): void;
  removeEventListener(type: string, fn: () => void): void;
}

/** Keeps one producer's state under `key` in `localStorage` (or another Web Storage). */
export class LocalStorageStore implements ProducerStore {
  private readonly key: string;
  private readonly storage: StorageLike;

  constructor(key: string, storage: StorageLike = (globalThis as unknown as { localStorage: StorageLike }).localStorage) {
    this.key = key;
    this.storage = storage;
  }

  async load(): Promise<ProducerState | null> {
    const text = this.storage.getItem(this.key);
    return text === null ? null : parseProducerState(text);
  }

  async save(state: ProducerState): Promise<void> {
    this.storage.setItem(this.key, JSON.stringify(state));
  }
}

/**
 * Sends everything queued at once, as `keepalive` requests, whenever the page becomes
 * hidden (tab switched, app backgrounded) or is being unloaded; back to normal batching
 * when it is visible again. @returns a function that stops listening
 */
export function deliverWhenHidden(producer: Producer, doc: DocumentLike = (globalThis as unknown as { document: DocumentLike }).document): () => void {
  const onVisibility = () => producer.setHidden(doc.visibilityState === "hidden");
  const onPageHide = () => producer.setHidden(true);
  doc.addEventListener("visibilitychange", onVisibility);
  doc.addEventListener("pagehide", onPageHide);
  return () => {
    doc.removeEventListener("visibilitychange", onVisibility);
    doc.removeEventListener("pagehide", onPageHide);
  };
}
