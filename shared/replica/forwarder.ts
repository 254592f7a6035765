/**
 * The primary's group-commit forwarder (DESIGN.md §4, issue 12): one forward at a time to
 * the standby carries every logged entry above its acknowledged LSN, so entries logged
 * while a forward is in flight go together in the next one; the standby's reply is its
 * acknowledgement. Writers wait until their entry is stable; a failed forward fails every
 * waiter (their entries stay pending and travel in the next forward). Never answers early.
 */
import type { LogEntry } from "../wire/persisted.ts";
import type { Replicate, ReplicateReply } from "../wire/replica-rpc.ts";

/** How a primary reaches its standby; the Durable Object backs it with a stub and a deadline. */
export interface ForwardPort {
  replicate(standby: string, msg: Replicate): Promise<ReplicateReply>;
  /**
   * Runs `step` at a later turn of the object, after calls waiting meanwhile (a spread
   * close's next entry, `shared/closing/`); rejects if it throws. Default: a microtask.
   */
  later?<T>(step: () => T): Promise<T>;
}

/** The primary as the forwarder sees it: null once it is no longer primary or lost its memory. */
export interface PrimaryView {
  epoch: number;
  /** Whether entries need a standby's acknowledgement; `standby` may still be unknown (data of an older deploy). */
  hasStandby: boolean;
  standby: string | null;
  lsn: number;
  appliedLsn: number;
  standbyAckLsn: number;
  pending: readonly LogEntry[];
}

/** What the forwarder needs from its replica. */
export interface ForwardLink {
  view(): PrimaryView | null;
  readLog(fromLsn: number, toLsn: number): LogEntry[];
  /** The standby held `lsn` after a forward sent at `epoch` to `standby`: make what it covers stable. */
  acked(epoch: number, standby: string, lsn: number): void;
}

/** How a waiter's entry became stable. */
export interface Stable {
  replicated: boolean;
  late: number;
}

interface Waiter {
  lsn: number;
  resolve(stable: Stable): void;
  reject(err: Error): void;
}

/** Forwards (first one plus gap fills) per round before the round counts as failed. */
const MAX_FORWARDS_PER_ROUND = 8;
/** Rounds in a row sent again because the primary moved to a newer epoch while each was in flight. */
const MAX_OVERTAKEN_ROUNDS = 2;
/** Log entries sent per gap fill (a standby far behind is caught up in pages). */
const GAP_PAGE = 200;
/** Record characters per forward at most (well under the RPC size limit); the rest goes in the next. */
const MAX_FORWARD_CHARS = 4_000_000;

export class Forwarder {
  readonly #port: ForwardPort;
  readonly #link: ForwardLink;
  #waiters: Waiter[] = [];
  #busy = false;

  constructor(port: ForwardPort, link: ForwardLink) {
    this.#port = port;
    this.#link = link;
  }

  /** Resolves once the entry at `lsn` is applied and (with a standby) held by it; rejects if a forward fails first. */
  waitStable(lsn: number): Promise<Stable> {
    const promise = new Promise<Stable>((resolve, reject) => this.#waiters.push({ lsn, resolve, reject }));
    this.settle();
    if (this.#waiters.length > 0) void this.#pump(); // its failures reject the waiters
    return promise;
  }

  /** Answers every waiter whose entry is now stable; `late` holds late counts of entries just applied. */
  settle(late?: ReadonlyMap<number, number>): void {
    // Every step settles; a standby's (or an idle primary's) has nobody to answer.
    if (this.#waiters.length === 0) return;
    const view = this.#link.view();
    if (!view) return this.fail("the replica is no longer primary or restarted");
    this.#waiters = this.#waiters.filter((w) => {
      const stable = view.appliedLsn >= w.lsn && (!view.hasStandby || view.standbyAckLsn >= w.lsn);
      if (stable) w.resolve({ replicated: view.hasStandby, late: late?.get(w.lsn) ?? 0 });
      return !stable;
    });
  }

  /** Fails every waiter: their entries stay pending until a later forward carries them. */
  fail(reason: string): void {
    for (const w of this.#waiters.splice(0)) w.reject(new Error(reason));
  }

  async #pump(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      let overtaken = 0;
      for (let view = this.#link.view(); view?.hasStandby && this.#waiters.length > 0; view = this.#link.view()) {
        if (view.standby === null) throw new Error("the primary does not know its standby yet (the monitor reconfigures it)");
        try {
          const held = await this.#forward(view, view.standby);
          this.#link.acked(view.epoch, view.standby, held);
        } catch (err) {
          // A round overtaken by the primary's own move to a newer epoch (the standby moved too, so it
          // refused the old one) goes again at the new epoch, if it still has a standby there: its
          // waiters' entries are still logged, and a forward at it can make them stable.
          const now = this.#link.view();
          if (!now?.hasStandby || now.epoch === view.epoch || ++overtaken > MAX_OVERTAKEN_ROUNDS) throw err;
        }
      }
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err));
    } finally {
      this.#busy = false;
    }
  }

  /** One round: the pending entries, then pages from the log for any gap. @returns the standby's LSN. */
  async #forward(view: PrimaryView, standby: string): Promise<number> {
    const { epoch } = view;
    const unacked = view.pending.filter((e) => e.lsn > view.standbyAckLsn);
    let entries = boundedByChars(unacked);
    // A bounded forward asks only for what it carries; the loop in #pump sends the rest next.
    const upToLsn = entries.length < unacked.length ? (entries[entries.length - 1]?.lsn ?? view.lsn) : view.lsn;
    for (let sent = 0; sent < MAX_FORWARDS_PER_ROUND; sent++) {
      const reply = await this.#port.replicate(standby, { epoch, entries, upToLsn });
      if (reply.status === "ok") return reply.lsn;
      if (reply.status !== "gap") throw new Error(`standby ${standby} refused the forward at epoch ${epoch}: ${reply.status}`);
      entries = this.#link.readLog(reply.lsn + 1, Math.min(upToLsn, reply.lsn + GAP_PAGE));
      if (entries[0]?.lsn !== reply.lsn + 1) throw new Error(`standby ${standby} needs LSN ${reply.lsn + 1}, which the log no longer holds`);
    }
    throw new Error(`standby ${standby} is still behind LSN ${upToLsn} after ${MAX_FORWARDS_PER_ROUND} forwards`);
  }
}

/** The longest prefix of `entries` within {@link MAX_FORWARD_CHARS} (at least one entry). */
function boundedByChars(entries: LogEntry[]): LogEntry[] {
  let chars = 0;
  for (let i = 0; i < entries.length; i++) {
    chars += entries[i]?.records.length ?? 0;
    if (chars > MAX_FORWARD_CHARS && i > 0) return entries.slice(0, i);
  }
  return entries;
}
