/**
 * SQLite and key-value access that counts rows (issue 12): every statement's cursor is
 * consumed here and its `rowsRead`/`rowsWritten` added to the isolate's counters, the
 * numbers the platform bills. The synchronous key-value API reports no row counts, so
 * each key it reads or writes counts as one row (how that API is billed).
 */
import { countRows } from "./counters.ts";

type SqlValue = string | number | null;

/** Runs statements on a Durable Object's SQLite database and counts their rows. */
export class CountedSql {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Runs a statement and returns every row it produced. */
  all<T extends Record<string, SqlStorageValue>>(query: string, ...args: SqlValue[]): T[] {
    const cursor = this.#sql.exec<T>(query, ...args);
    const rows = cursor.toArray();
    countRows(cursor.rowsRead, cursor.rowsWritten);
    return rows;
  }

  /** Runs a statement for its effect. */
  run(query: string, ...args: SqlValue[]): void {
    this.all(query, ...args);
  }
}

/** The synchronous key-value API with each key read or written counted as one row. */
export function countedKv(kv: SyncKvStorage): SyncKvStorage {
  const counted: SyncKvStorage = {
    get: <T>(key: string) => {
      countRows(1, 0);
      return kv.get<T>(key);
    },
    put: <T>(key: string, value: T) => {
      countRows(0, 1);
      kv.put(key, value);
    },
    delete: (key: string) => {
      countRows(0, 1);
      return kv.delete(key);
    },
    list: <T>(options?: SyncKvListOptions) => {
      const entries = [...kv.list<T>(options)];
      countRows(Math.max(1, entries.length), 0);
      return entries;
    },
  };
  return counted;
}
