/**
 * An in-memory stand-in for the part of IndexedDB that `client/indexeddb-store.ts` uses:
 * requests and transactions settle in later microtasks, as in a browser, and a write is
 * visible only once its transaction commits; commits can be held back or made to fail.
 */
import type { IdbFactoryLike } from "../../client/indexeddb-store.ts";

type Factory = IdbFactoryLike;
type Db = ReturnType<Factory["open"]>["result"];
type Tx = ReturnType<Db["transaction"]>;

export class FakeIndexedDb implements Factory {
  /** Committed records: `database/store/key` to value. */
  readonly committed = new Map<string, unknown>();
  /** Transactions waiting for {@link releaseCommits} while `holding`. */
  holding = false;
  private held: (() => void)[] = [];
  failNextCommit = false;
  /** Every connection opened, oldest first. */
  readonly connections: Db[] = [];

  open(name: string) {
    const stores = new Set<string>();
    const db: Db = {
      objectStoreNames: { contains: (store) => stores.has(store) },
      createObjectStore: (store) => stores.add(store),
      transaction: (store) => this.transaction(`${name}/${store}`),
      close: () => undefined,
      onversionchange: null,
      onclose: null,
    };
    this.connections.push(db);
    const request = { result: db, error: null, onsuccess: null as (() => void) | null, onerror: null as (() => void) | null, onupgradeneeded: null as (() => void) | null };
    queueMicrotask(() => {
      request.onupgradeneeded?.();
      request.onsuccess?.();
    });
    return request;
  }

  releaseCommits(): void {
    this.holding = false;
    for (const commit of this.held.splice(0)) commit();
  }

  private transaction(prefix: string): Tx {
    const staged = new Map<string, unknown>();
    const tx: Tx = {
      error: null,
      oncomplete: null,
      onerror: null,
      onabort: null,
      objectStore: () => ({
        get: (key) => this.request(this.committed.get(`${prefix}/${key}`)),
        put: (value, key) => {
          staged.set(`${prefix}/${key}`, value);
          return this.request(undefined);
        },
      }),
    };
    const commit = () => {
      if (this.failNextCommit) {
        this.failNextCommit = false;
        (tx as { error: unknown }).error = Object.assign(new Error("the quota is exceeded"), { name: "QuotaExceededError" });
        tx.onabort?.();
        return;
      }
      for (const [k, v] of staged) this.committed.set(k, v);
      tx.oncomplete?.();
    };
    queueMicrotask(() => queueMicrotask(() => (this.holding ? this.held.push(commit) : commit())));
    return tx;
  }

  private request<T>(result: T) {
    const request = { result, error: null, onsuccess: null as (() => void) | null, onerror: null as (() => void) | null };
    queueMicrotask(() => request.onsuccess?.());
    return request;
  }
}

