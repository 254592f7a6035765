/**
 * The router's per-isolate batching component (STYLE.md §3, issue 12): concurrent
 * sub-batches bound for the same primary (at the same epoch) share one `write` call.
 * Flush rule: a batch goes at once when no call to that primary is in flight; while one
 * is, batches wait and, as soon as it ends, all go together in arrival order, the first
 * of them making the call. Bounds: at most `maxBatches` batches and `maxChars` record
 * characters per call; a group that reaches either goes at once. A call still in flight
 * after `staleMs` is taken as lost with its request and no longer holds the others back.
 * Each caller gets its own outcome. Every call is made by one of its callers, through its
 * port (workerd binds I/O to its request: "Cannot perform I/O on behalf of a different
 * request"). A waiting caller sleeps on a promise of its own request that the lane wakes
 * when it changes (a call ends, a group fills, a request leaves; workerd runs the
 * continuation in the waiting request); its timers (`After`) only end a linger, a stale
 * call or its patience. Nothing in it must survive the isolate: its callers would resend.
 */
import type { WriteBatch, WriteReply } from "../wire/replica-rpc.ts";
import type { ReplicaPort, SendBatch } from "./write-partition.ts";

/** Runs `fire` after `ms` on the caller's own timer; may return a function that cancels it. */
export type After = (ms: number, fire: () => void) => (() => void) | void;

/** A request the coalescer counts as in progress (see {@link WriteCoalescer.enter}). */
export interface InProgress { leave(): void }

/** Bounds and timing of the coalescer. */
export interface CoalescerOptions {
  maxBatches: number;
  maxChars: number;
  /** A caller that had to wait gives up (and its request fails, to be resent) this many ms after its batch arrived. */
  giveUpMs: number;
  /** A call in flight this long (past its own deadline) was lost with its request: the next caller no longer waits for it, ms. */
  staleMs: number;
  /**
   * How long a batch that finds its lane idle (no call in flight, none waiting) waits before
   * it sends while other requests are in progress in this isolate ({@link WriteCoalescer.enter}),
   * so that their batches (and those of requests their answers bring back) join its call
   * (ms, 0: never). A request alone in the isolate (low load) never waits, and batches that
   * waited behind a call go as soon as it ends.
   */
  lingerMs: number;
  /** The isolate's clock (ms), if any: a request in progress for longer than `staleMs` (one the runtime dropped) no longer counts for lingering. */
  now?: () => number;
}

type Outcome = { reply: WriteReply } | { error: unknown };

/** A caller's batch; `wake` makes it look again (a no-op unless it sleeps); `lingering`: it waits for other requests' batches. */
interface Waiting {
  batch: WriteBatch;
  outcome: Outcome | null;
  wake: () => void;
  lingering: boolean;
}

interface Lane {
  inFlight: number;
  waiting: Waiting[];
  chars: number;
  /** Bumped when in-flight calls are given up as lost; a call of an older generation no longer counts. */
  generation: number;
}

const ASLEEP = () => {};

export class WriteCoalescer {
  readonly #options: CoalescerOptions;
  readonly #lanes = new Map<string, Lane>();
  /** Requests in progress: entered by {@link enter} and not left yet, oldest first. */
  readonly #inProgress = new Set<InProgress & { readonly at: number }>();
  /** Callers that linger for other requests; a request that leaves wakes them to look again. */
  readonly #lingering = new Set<Waiting>();

  constructor(options: CoalescerOptions) {
    this.#options = options;
  }

  /** Counts a request as in progress until it leaves (idempotent); its own sends do not wait for it. */
  enter(): InProgress {
    const request = {
      at: this.#options.now?.() ?? 0,
      leave: () => {
        if (this.#inProgress.delete(request)) for (const w of this.#lingering) w.wake();
      },
    };
    this.#inProgress.add(request);
    return request;
  }

  /** How a caller sends its batches: alone or with others for the same primary, through `port` when it makes the call, its timers on `after`. */
  sendVia(port: ReplicaPort, after: After, request?: InProgress): SendBatch {
    return (primary, epoch, batch) => this.#send(port, after, primary, epoch, batch, request);
  }

  /** Whether a request other than the caller's own is in progress (dropping, oldest first, those in progress too long to count). */
  #othersInProgress(request: InProgress | undefined): boolean {
    const now = this.#options.now?.();
    for (const other of this.#inProgress) {
      if (now !== undefined && now - other.at > this.#options.staleMs) this.#inProgress.delete(other);
      else if (other !== request) return true;
    }
    return false;
  }

  async #send(port: ReplicaPort, after: After, primary: string, epoch: number, batch: WriteBatch, request?: InProgress): Promise<WriteReply> {
    const key = `${epoch}:${primary}`;
    let lane = this.#lanes.get(key);
    if (!lane) this.#lanes.set(key, (lane = { inFlight: 0, waiting: [], chars: 0, generation: 0 }));
    const me: Waiting = { batch, outcome: null, wake: ASLEEP, lingering: false };
    const idle = lane.inFlight === 0 && lane.waiting.length === 0;
    lane.waiting.push(me);
    lane.chars += batch.records.length;
    if (this.#isFull(lane)) lane.waiting[0]?.wake();
    const timers: (() => void)[] = [];
    const arm = (ms: number, fire: () => void) => {
      const cancel = after(ms, () => (fire(), me.wake()));
      if (cancel) timers.push(cancel);
    };
    if (idle && this.#options.lingerMs > 0 && this.#othersInProgress(request)) {
      me.lingering = true;
      this.#lingering.add(me);
      arm(this.#options.lingerMs, () => this.#stopLingering(me));
    }
    try {
      return await this.#await(lane, me, port, key, primary, epoch, request, arm);
    } finally {
      this.#stopLingering(me);
      for (const cancel of timers) cancel();
    }
  }

  /** The caller's loop: lead when its turn comes, else sleep until the lane or a timer wakes it. */
  async #await(lane: Lane, me: Waiting, port: ReplicaPort, key: string, primary: string, epoch: number, request: InProgress | undefined, arm: (ms: number, fire: () => void) => void): Promise<WriteReply> {
    let patient = true;
    let watching = false;
    for (let waited = false; ; waited = true) {
      if (me.outcome) return unwrap(me.outcome);
      if (!patient) throw this.#giveUp(lane, me, primary);
      if (me.lingering && !this.#othersInProgress(request)) this.#stopLingering(me);
      const first = lane.waiting[0] === me;
      if (first && ((lane.inFlight === 0 && !me.lingering) || this.#isFull(lane))) await this.#lead(port, key, lane, primary, epoch);
      if (me.outcome) continue;
      if (!waited) arm(this.#options.giveUpMs, () => (patient = false));
      if (first && lane.inFlight > 0 && !watching) {
        // Only the first in line starts calls, so if it is still first and blocked after staleMs, those in flight were lost.
        watching = true;
        arm(this.#options.staleMs, () => {
          watching = false;
          if (lane.inFlight > 0 && lane.waiting[0] === me) (lane.inFlight = 0), (lane.generation += 1);
        });
      }
      await new Promise<void>((resolve) => (me.wake = resolve));
      me.wake = ASLEEP;
    }
  }

  #stopLingering(me: Waiting): void {
    (me.lingering = false), this.#lingering.delete(me);
  }

  /** Takes an impatient caller out of the lane (waking the next, if it was first) and says why it failed. */
  #giveUp(lane: Lane, me: Waiting, primary: string): Error {
    const index = lane.waiting.indexOf(me);
    if (index >= 0) (lane.waiting.splice(index, 1), (lane.chars -= me.batch.records.length));
    if (index === 0) lane.waiting[0]?.wake();
    return new Error(`write to ${primary} not sent within ${this.#options.giveUpMs} ms (coalescer)`);
  }

  #isFull(lane: Lane): boolean {
    return lane.waiting.length >= this.#options.maxBatches || lane.chars >= this.#options.maxChars;
  }

  /** Takes the next group (the caller first), makes its call from the caller's context and wakes whoever it concerns. */
  async #lead(port: ReplicaPort, key: string, lane: Lane, primary: string, epoch: number): Promise<void> {
    const group: Waiting[] = [];
    let chars = 0;
    for (const next of lane.waiting) {
      if (group.length >= this.#options.maxBatches || (group.length > 0 && chars + next.batch.records.length > this.#options.maxChars)) break;
      group.push(next);
      chars += next.batch.records.length;
    }
    lane.waiting.splice(0, group.length);
    lane.chars -= chars;
    lane.inFlight += 1;
    // The next in line looks at once: it may fill a group, and it watches for a stale call.
    lane.waiting[0]?.wake();
    const generation = lane.generation;
    try {
      const reply = await port.write(primary, { epoch, batches: group.map((w) => w.batch) });
      group.forEach((w, i) => (w.outcome = { reply: reply.status === "ok" ? { status: "ok", results: reply.results.slice(i, i + 1) } : reply }));
    } catch (error) {
      for (const w of group) w.outcome = { error };
    } finally {
      if (lane.generation === generation) lane.inFlight -= 1;
      if (lane.inFlight === 0 && lane.waiting.length === 0) this.#lanes.delete(key);
      for (const w of group) w.wake();
      lane.waiting[0]?.wake();
    }
  }
}

function unwrap(outcome: Outcome): WriteReply {
  if ("error" in outcome) throw outcome.error;
  return outcome.reply;
}
