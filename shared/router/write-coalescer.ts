/**
 * The router's per-isolate batching component (STYLE.md §3, issue 12): concurrent
 * sub-batches bound for the same primary (at the same epoch) share one `write` call.
 * Flush rule: a batch goes at once when no call to that primary is in flight; while one
 * is, batches wait and, as soon as it ends, all go together in arrival order, the first
 * of them making the call. Bounds: at most `maxBatches` batches and `maxChars` record
 * characters per call; a group that reaches either goes at once. A call still in flight
 * after `staleMs` is taken as lost with its request and no longer holds the others back. Each caller gets its own
 * batch's outcome. Waiting callers poll instead of awaiting another request's promise,
 * and every call is made by one of its own callers, through that caller's port: the
 * Workers runtime forbids one request resolving or doing I/O for another (measured:
 * "Cannot perform I/O on behalf of a different request"), so a caller polls on a timer
 * of its own context (`After`). Waking a waiter by resolving its promise from the request
 * whose call ended was tried (issue 30): in workerd 4.164, R=2 at P=1 ran 52-57k events/s
 * against 61-62k polling, in one run, and the runtime cancelled a request as hung ("your
 * Worker's code had hung"). A request the runtime drops (its client went away) stops
 * polling wherever it stood: a call it made is given up after `staleMs`, and so is its
 * batch when it is first in line and has not polled for that long, so neither can block
 * the lane. It holds nothing that must survive the isolate: a lost isolate fails the
 * callers, who resend.
 */
import type { WriteBatch, WriteReply } from "../wire/replica-rpc.ts";
import type { ReplicaPort, SendBatch } from "./write-partition.ts";

/** Runs `fire` after `ms` on the caller's own timer. */
export type After = (ms: number, fire: () => void) => void;

/** A request the coalescer counts as in progress (see {@link WriteCoalescer.enter}). */
export interface InProgress {
  leave(): void;
}

/** Bounds and timing of the coalescer. */
export interface CoalescerOptions {
  maxBatches: number;
  maxChars: number;
  /** How often a waiting caller looks whether its batch was answered or its turn came, ms. */
  pollMs: number;
  /** A waiting caller gives up (and its request fails, to be resent) after this many ms of polls. */
  giveUpMs: number;
  /**
   * A call still in flight after this many ms (longer than a call's own deadline) was lost
   * with its request (e.g. the client went away and the runtime dropped that request's
   * I/O): the next caller sends without waiting for it, so the lane cannot stay blocked.
   */
  staleMs: number;
  /**
   * At most this many polls a caller on an idle lane waits before it sends while other
   * requests are in progress in this isolate ({@link WriteCoalescer.enter}), so that their
   * batches (and those of requests their answers bring back) join its call (0: never).
   * A request alone in the isolate (low load) never waits; batches that waited behind a
   * call wait so once it ends only while calls to other primaries are in flight.
   */
  lingerPolls: number;
  /**
   * The isolate's clock (ms), when it has one: a request in progress for longer than
   * `staleMs` no longer counts for lingering, so one whose handler never finishes (the
   * runtime dropped it) cannot make every later send linger. Without it, none expires.
   */
  now?: () => number;
}

type Outcome = { reply: WriteReply } | { error: unknown };

interface Waiting {
  batch: WriteBatch;
  outcome: Outcome | null;
  /** Polls this caller has made: one that stops counting has stopped running. */
  polls: number;
}

/** What a caller behind the first in line saw of it: the first's polls, unchanged for `stalledMs` of its own polls. */
interface Watch {
  first: Waiting | undefined;
  polls: number;
  stalledMs: number;
}

interface Lane {
  inFlight: number;
  waiting: Waiting[];
  chars: number;
  /** Bumped when in-flight calls are given up as lost; a call of an older generation no longer counts. */
  generation: number;
}

export class WriteCoalescer {
  readonly #options: CoalescerOptions;
  readonly #lanes = new Map<string, Lane>();
  /** Requests in progress: entered by {@link enter} and not left yet, oldest first. */
  readonly #inProgress = new Set<InProgress & { readonly at: number }>();

  constructor(options: CoalescerOptions) {
    this.#options = options;
  }

  /** Counts a request as in progress until it leaves (idempotent); its own sends do not wait for it. */
  enter(): InProgress {
    const request = {
      at: this.#options.now?.() ?? 0,
      leave: () => void this.#inProgress.delete(request),
    };
    this.#inProgress.add(request);
    return request;
  }

  /** How a caller sends its batches: alone or with others for the same primary, through `port` when it makes the call, polling on `after`. */
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
    const me: Waiting = { batch, outcome: null, polls: 0 };
    // A batch that finds its lane idle may linger; one that waited behind a call lingers once it ends only while
    // calls to other primaries are in flight (the isolate has other work then; else the primary would sit idle).
    const arrivedIdle = lane.inFlight === 0 && lane.waiting.length === 0;
    lane.waiting.push(me);
    lane.chars += batch.records.length;
    // How long this caller has been first in line behind a call in flight.
    let blockedMs = 0;
    // Polls this caller has made since the lane was last busy.
    let idlePolls = 0;
    const watch: Watch = { first: undefined, polls: 0, stalledMs: 0 };
    for (let waitedMs = 0; ; waitedMs += this.#options.pollMs, me.polls++) {
      if (!me.outcome) this.#dropStalledFirst(lane, me, watch);
      const first = !me.outcome && lane.waiting[0] === me;
      if (first && lane.inFlight > 0 && blockedMs > this.#options.staleMs) {
        lane.inFlight = 0;
        lane.generation += 1;
      }
      const linger = idlePolls < this.#options.lingerPolls && (arrivedIdle || this.#otherLanesBusy(lane)) && this.#othersInProgress(request);
      if (first && ((lane.inFlight === 0 && !linger) || this.#isFull(lane))) await this.#lead(port, key, lane, primary, epoch);
      if (me.outcome) return unwrap(me.outcome);
      if (waitedMs >= this.#options.giveUpMs) {
        this.#leaveLane(key, lane, me);
        throw new Error(`write to ${primary} not sent within ${this.#options.giveUpMs} ms (coalescer)`);
      }
      await new Promise<void>((resolve) => after(this.#options.pollMs, resolve));
      blockedMs = lane.waiting[0] === me && lane.inFlight > 0 ? blockedMs + this.#options.pollMs : 0;
      idlePolls = lane.inFlight > 0 ? 0 : idlePolls + 1;
    }
  }

  /**
   * Takes the first in line out of `lane` once it has not polled for `staleMs` of the
   * caller's own polls: its request was dropped (its timers never fire again), and no one
   * behind it may send while it stands first. Its outcome says so, should it ever run again.
   */
  #dropStalledFirst(lane: Lane, me: Waiting, watch: Watch): void {
    const first = lane.waiting[0];
    if (!first || first === me) return;
    if (first !== watch.first || first.polls !== watch.polls) {
      Object.assign(watch, { first, polls: first.polls, stalledMs: 0 });
      return;
    }
    watch.stalledMs += this.#options.pollMs;
    if (watch.stalledMs <= this.#options.staleMs) return;
    lane.waiting.shift();
    lane.chars -= first.batch.records.length;
    first.outcome = { error: new Error(`write not sent: it stood first in line without polling for ${this.#options.staleMs} ms (its request was dropped)`) };
    watch.first = undefined;
  }

  /** Takes a caller that gives up out of its lane (its characters with it), and an emptied idle lane out of the map. */
  #leaveLane(key: string, lane: Lane, me: Waiting): void {
    const before = lane.waiting.length;
    lane.waiting = lane.waiting.filter((w) => w !== me);
    if (lane.waiting.length < before) lane.chars -= me.batch.records.length;
    if (lane.inFlight === 0 && lane.waiting.length === 0 && this.#lanes.get(key) === lane) this.#lanes.delete(key);
  }

  /** Whether a call to another primary is in flight from this isolate. */
  #otherLanesBusy(lane: Lane): boolean {
    for (const other of this.#lanes.values()) if (other !== lane && other.inFlight > 0) return true;
    return false;
  }

  #isFull(lane: Lane): boolean {
    return lane.waiting.length >= this.#options.maxBatches || lane.chars >= this.#options.maxChars;
  }

  /** Takes the next group (the caller first) and makes its call from the caller's context. */
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
    const generation = lane.generation;
    try {
      const reply = await port.write(primary, { epoch, batches: group.map((w) => w.batch) });
      group.forEach((w, i) => (w.outcome = { reply: reply.status === "ok" ? { status: "ok", results: reply.results.slice(i, i + 1) } : reply }));
    } catch (error) {
      for (const w of group) w.outcome = { error };
    } finally {
      if (lane.generation === generation) lane.inFlight -= 1;
      if (lane.inFlight === 0 && lane.waiting.length === 0) this.#lanes.delete(key);
    }
  }
}

function unwrap(outcome: Outcome): WriteReply {
  if ("error" in outcome) throw outcome.error;
  return outcome.reply;
}
