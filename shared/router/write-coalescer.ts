/**
 * The router's per-isolate batching component (STYLE.md §3, issue 12): concurrent
 * sub-batches bound for the same primary (at the same epoch) share one `write` call.
 * Flush rule: a batch goes at once when no call to that primary is in flight; while one
 * is, batches wait and all go together, in arrival order, as soon as it ends. Bounds: at
 * most `maxBatches` batches and `maxChars` record characters per call; a group that
 * reaches either goes at once. Each caller gets its own batch's outcome. It holds nothing
 * that must survive the isolate: a lost isolate fails the callers, who resend.
 */
import type { WriteBatch, WriteReply } from "../wire/replica-rpc.ts";
import type { ReplicaPort, SendBatch } from "./write-partition.ts";

/** Bounds of one coalesced call. */
export interface CoalescerBounds {
  maxBatches: number;
  maxChars: number;
}

/** Defaults: well under the RPC size limit (32 MiB) and the primary's per-call work. */
const DEFAULT_COALESCER_BOUNDS: CoalescerBounds = { maxBatches: 64, maxChars: 4_000_000 };

interface Waiting {
  batch: WriteBatch;
  resolve(reply: WriteReply): void;
  reject(err: unknown): void;
}

interface Lane {
  inFlight: number;
  waiting: Waiting[];
  chars: number;
}

export class WriteCoalescer {
  readonly #port: ReplicaPort;
  readonly #bounds: CoalescerBounds;
  readonly #lanes = new Map<string, Lane>();

  constructor(port: ReplicaPort, bounds: CoalescerBounds = DEFAULT_COALESCER_BOUNDS) {
    this.#port = port;
    this.#bounds = bounds;
  }

  /** Sends one batch, alone or with others waiting for the same primary; resolves to its own outcome. */
  readonly send: SendBatch = (primary, epoch, batch) => {
    const key = `${epoch}:${primary}`;
    let lane = this.#lanes.get(key);
    if (!lane) this.#lanes.set(key, (lane = { inFlight: 0, waiting: [], chars: 0 }));
    const reply = new Promise<WriteReply>((resolve, reject) => lane.waiting.push({ batch, resolve, reject }));
    lane.chars += batch.records.length;
    const full = lane.waiting.length >= this.#bounds.maxBatches || lane.chars >= this.#bounds.maxChars;
    if (lane.inFlight === 0 || full) this.#flush(key, lane, primary, epoch);
    return reply;
  };

  #flush(key: string, lane: Lane, primary: string, epoch: number): void {
    const group: Waiting[] = [];
    let chars = 0;
    while (lane.waiting.length > 0 && group.length < this.#bounds.maxBatches) {
      const next = lane.waiting[0];
      if (!next || (group.length > 0 && chars + next.batch.records.length > this.#bounds.maxChars)) break;
      lane.waiting.shift();
      group.push(next);
      chars += next.batch.records.length;
    }
    lane.chars -= chars;
    lane.inFlight += 1;
    this.#port.write(primary, { epoch, batches: group.map((w) => w.batch) }).then(
      (reply) => group.forEach((w, i) => w.resolve(reply.status === "ok" ? { status: "ok", results: reply.results.slice(i, i + 1) } : reply)),
      (err: unknown) => group.forEach((w) => w.reject(err)),
    ).finally(() => {
      lane.inFlight -= 1;
      if (lane.waiting.length > 0 && lane.inFlight === 0) this.#flush(key, lane, primary, epoch);
      else if (lane.waiting.length === 0 && lane.inFlight === 0) this.#lanes.delete(key);
    });
  }
}
