/** The registry's entries, one per dataflow, in its key-value storage (issue 29; `shared/wire/registry.ts`). */
import { RegistryEntrySchema, type RegistryEntry } from "../shared/wire/registry.ts";
import { sourcesOf } from "../shared/wire/dataflow-spec.ts";

const ENTRY = "entry:";

export class RegistryEntries {
  readonly #kv: SyncKvStorage;

  constructor(kv: SyncKvStorage) {
    this.#kv = kv;
  }

  list(): RegistryEntry[] {
    return [...this.#kv.list({ prefix: ENTRY })].map(([, value]) => RegistryEntrySchema.parse(value));
  }

  read(id: string): RegistryEntry | null {
    const value = this.#kv.get(ENTRY + id);
    return value === undefined ? null : RegistryEntrySchema.parse(value);
  }

  put(entry: RegistryEntry): void {
    this.#kv.put(ENTRY + entry.id, entry);
  }

  remove(id: string): void {
    this.#kv.delete(ENTRY + id);
  }

  /** The stages reading `id` (issue 27): every dataflow naming it in `from` that is not being deleted. */
  readersOf(id: string): RegistryEntry[] {
    return this.list().filter((e) => !e.deleting && sourcesOf(e.spec).includes(id));
  }

  /** The dataflows reading `stream` that are not being deleted: its directory's members, sorted. */
  membersOf(stream: string): string[] {
    return this.list()
      .filter((e) => !e.deleting && e.spec.stream === stream)
      .map((e) => e.id)
      .sort();
  }
}
