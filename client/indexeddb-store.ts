/**
 * A producer store in IndexedDB, for browser producers that must survive a page reload
 * (issue 26): `save` resolves only once its readwrite transaction has completed, with
 * `durability: "strict"`, so the batch in flight is on disk before the producer sends it.
 */
import { parseProducerState, type ProducerState, type ProducerStore } from "../shared/client/producer-store.ts";

/** The part of an `IDBRequest` the store uses. */
interface IdbRequestLike<T> {
  readonly result: T;
  readonly error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}

/** The part of an `IDBTransaction` the store uses. */
interface IdbTransactionLike {
  readonly error: unknown;
  objectStore(name: string): { get(key: string): IdbRequestLike<unknown>; put(value: string, key: string): IdbRequestLike<unknown> };
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}

/** The part of an `IDBDatabase` the store uses. */
interface IdbDatabaseLike {
  readonly objectStoreNames: { contains(name: string): boolean };
  createObjectStore(name: string): unknown;
  transaction(store: string, mode: "readonly" | "readwrite", options?: { durability: "strict" }): IdbTransactionLike;
  close(): void;
  onversionchange: (() => void) | null;
  onclose: (() => void) | null;
}

/** The part of `indexedDB` (an `IDBFactory`) the store uses. */
export interface IdbFactoryLike {
  open(name: string, version: number): IdbRequestLike<IdbDatabaseLike> & { onupgradeneeded: (() => void) | null };
}

/** Where the store keeps its records, and which IndexedDB to use. */
interface IndexedDbStoreOptions {
  /** The database (default `flux-producers`); its one object store is `producer-states`. */
  database?: string;
  /** Default: the page's `indexedDB`. */
  indexedDB?: IdbFactoryLike;
}

const OBJECT_STORE = "producer-states";

/** Keeps one producer's state under `key` in IndexedDB; several stores (producers) may share a database. */
export class IndexedDbStore implements ProducerStore {
  private readonly key: string;
  private readonly database: string;
  private readonly factory: IdbFactoryLike;
  private db: Promise<IdbDatabaseLike> | null = null;

  constructor(key: string, options: IndexedDbStoreOptions = {}) {
    this.key = key;
    this.database = options.database ?? "flux-producers";
    this.factory = options.indexedDB ?? (globalThis as unknown as { indexedDB: IdbFactoryLike }).indexedDB;
  }

  async load(): Promise<ProducerState | null> {
    const tx = (await this.open()).transaction(OBJECT_STORE, "readonly");
    const text = await settled(tx.objectStore(OBJECT_STORE).get(this.key), `reading ${this.key}`);
    if (text === undefined) return null;
    if (typeof text !== "string") throw new Error(`IndexedDB ${this.database}/${OBJECT_STORE} holds a value of type ${typeof text} under ${this.key}, not a saved producer state`);
    return parseProducerState(text);
  }

  /** Resolves once the transaction has completed (not merely the put succeeded): only then is the state durable. */
  async save(state: ProducerState): Promise<void> {
    const tx = (await this.open()).transaction(OBJECT_STORE, "readwrite", { durability: "strict" });
    const done = completed(tx, `saving ${this.key}`);
    tx.objectStore(OBJECT_STORE).put(JSON.stringify(state), this.key);
    await done;
  }

  /** The database, opened (and its object store created) once; a failed open is retried by the next call. */
  private open(): Promise<IdbDatabaseLike> {
    if (this.db) return this.db;
    const opening: Promise<IdbDatabaseLike> = openDatabase(this.factory, this.database).then(
      (db) => {
        // Another tab upgrading the database asks us to let go, or the browser closed the
        // connection (site data cleared): the next call reopens it.
        const forget = () => {
          if (this.db === opening) this.db = null;
        };
        db.onversionchange = () => {
          db.close();
          forget();
        };
        db.onclose = forget;
        return db;
      },
      (err: unknown) => {
        if (this.db === opening) this.db = null;
        throw err;
      },
    );
    this.db = opening;
    return opening;
  }
}

function openDatabase(factory: IdbFactoryLike, name: string): Promise<IdbDatabaseLike> {
  const request = factory.open(name, 1);
  request.onupgradeneeded = () => {
    if (!request.result.objectStoreNames.contains(OBJECT_STORE)) request.result.createObjectStore(OBJECT_STORE);
  };
  return settled(request, `opening database ${name}`);
}

function settled<T>(request: IdbRequestLike<T>, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(idbError(what, request.error));
  });
}

function completed(tx: IdbTransactionLike, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(idbError(what, tx.error));
    tx.onabort = () => reject(idbError(what, tx.error ?? "the transaction was aborted"));
  });
}

function idbError(what: string, cause: unknown): Error {
  return new Error(`IndexedDB: ${what} failed: ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}`, { cause });
}
