/**
 * What a producer persists so a restart neither loses nor duplicates a batch: its id, the
 * next seq, the batch in flight (written before it is sent) and running totals (written
 * in the same save that clears the batch, so they stay exact across crashes).
 */
import * as z from "zod";

/** Counts of everything acknowledged so far. `records` come from the ingest answer (0 while the server does not report them). */
const ProducerTotalsSchema = z.object({
  batches: z.number().int().min(0),
  events: z.number().int().min(0),
  /** Batches the server said it had applied before (a resend after a lost answer). */
  duplicateBatches: z.number().int().min(0),
  /** Records (events × dataflows) counted, dropped by a filter, and dropped as too late. */
  accepted: z.number().int().min(0),
  filtered: z.number().int().min(0),
  late: z.number().int().min(0),
  /** Batches refused as a whole (400, 413, 415; nothing of them applied) and their events. */
  rejectedBatches: z.number().int().min(0).default(0),
  rejectedEvents: z.number().int().min(0).default(0),
});
export type ProducerTotals = z.infer<typeof ProducerTotalsSchema>;

/** A batch that was given a seq and may have reached the server: resent with that seq until acknowledged. */
const PendingBatchSchema = z.object({
  seq: z.number().int().min(1),
  /** Each event as JSON text. */
  events: z.array(z.string()),
  /** The caller's position after the batch's last event (see `Producer.send`), kept with it. */
  tag: z.unknown().optional(),
});
export type PendingBatch = z.infer<typeof PendingBatchSchema>;

/** The persisted record, versioned (STYLE.md §2); unknown fields are tolerated. */
export const ProducerStateSchema = z.object({
  v: z.literal(1),
  producerId: z.string(),
  stream: z.string(),
  nextSeq: z.number().int().min(1),
  pending: PendingBatchSchema.nullable(),
  /** Tag of the last batch settled (acknowledged or rejected), so a caller can resume its input after it. */
  ackedTag: z.unknown().optional(),
  totals: ProducerTotalsSchema,
});
export type ProducerState = z.infer<typeof ProducerStateSchema>;

/** A fresh state for a producer that has sent nothing. */
export function freshProducerState(producerId: string, stream: string): ProducerState {
  return { v: 1, producerId, stream, nextSeq: 1, pending: null, totals: { batches: 0, events: 0, duplicateBatches: 0, accepted: 0, filtered: 0, late: 0, rejectedBatches: 0, rejectedEvents: 0 } };
}

/** A new producer id: `flux-` and 16 hex digits from `random` (uniform in [0, 1)). */
export function randomProducerId(random: () => number): string {
  let hex = "";
  for (let i = 0; i < 16; i++) hex += Math.floor(random() * 16).toString(16);
  return `flux-${hex}`;
}

/** Totals after one more acknowledged batch of `events` events. */
export function addAck(t: ProducerTotals, events: number, duplicate: boolean, records: { accepted: number; filtered: number; late: number }): ProducerTotals {
  return {
    ...t,
    batches: t.batches + 1,
    events: t.events + events,
    duplicateBatches: t.duplicateBatches + (duplicate ? 1 : 0),
    accepted: t.accepted + records.accepted,
    filtered: t.filtered + records.filtered,
    late: t.late + records.late,
  };
}

/**
 * Where a producer keeps its state. `save` must be durable when it resolves (the
 * producer sends a batch only after its save resolved). Implementations: memory (here),
 * a file for Node (`bin/cli/file-store.ts`), IndexedDB and localStorage for browsers
 * (`client/indexeddb-store.ts`, `client/browser.ts`); one contract test runs against all.
 */
export interface ProducerStore {
  /** The saved state, or null when there is none. */
  load(): Promise<ProducerState | null>;
  save(state: ProducerState): Promise<void>;
}

/** Keeps state in memory: survives a new `Producer` on the same store, not a process restart. */
export class MemoryStore implements ProducerStore {
  private state: ProducerState | null = null;

  async load(): Promise<ProducerState | null> {
    return this.state === null ? null : structuredCloneState(this.state);
  }

  async save(state: ProducerState): Promise<void> {
    this.state = structuredCloneState(state);
  }
}

/** Reads saved text into a state. @throws Error naming the problem when it is not a producer state */
export function parseProducerState(text: string): ProducerState {
  const parsed = ProducerStateSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`saved producer state is not readable: ${parsed.error.message.slice(0, 200)}`);
  return parsed.data;
}

function structuredCloneState(state: ProducerState): ProducerState {
  return parseProducerState(JSON.stringify(state));
}
