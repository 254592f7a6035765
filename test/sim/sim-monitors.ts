/**
 * The monitor objects of a simulated run (issue 29): one per dataflow, each ticking on its
 * own loop, each down, slow or restarted on its own; and the check that a takeover in one
 * dataflow never waits for another dataflow's monitor (`monitor-independent`).
 */
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import type { Violations } from "./violations.ts";

/**
 * How long a primary that crashed or hung may go without a takeover while its own monitor
 * was up and quick throughout: measured over the `npm test` seeds of every workload (the
 * longest was 285 ms: two missed probes a heartbeat apart, each up to its deadline, a tick
 * that dies part-way, and a tick busy with a recovery), with room to spare. A monitor
 * outage lasts 100-600 ms, so a takeover that waits for another dataflow's monitor misses it.
 */
const TAKEOVER_LIMIT_MS = 400;

/** One dataflow's monitor object: whether it answers, how slow it is, whether its next tick dies. */
export class SimMonitor {
  up = true;
  /** Extra delay of each call its ticks make while slow (0: not slow). */
  slowMs = 0;
  /** Its next tick dies part-way (the object restarted mid-tick). */
  restartPending = false;
  /** When it was down or slow: [from, to) in simulated ms (`to` Infinity while it still is). */
  readonly #disturbed: { from: number; to: number }[] = [];

  /** Marks the start of a time it is down or slow. */
  disturb(nowMs: number, change: { up?: boolean; slowMs?: number }): void {
    if (change.up !== undefined) this.up = change.up;
    if (change.slowMs !== undefined) this.slowMs = change.slowMs;
    this.#disturbed.push({ from: nowMs, to: Number.POSITIVE_INFINITY });
  }

  /** Back to normal. */
  restore(nowMs: number): void {
    this.up = true;
    this.slowMs = 0;
    for (const d of this.#disturbed) if (d.to === Number.POSITIVE_INFINITY) d.to = nowMs;
  }

  /** Whether it was down or slow at any time in [from, to]. */
  disturbedBetween(from: number, to: number): boolean {
    return this.#disturbed.some((d) => d.from <= to && d.to >= from);
  }
}

/** A primary that crashed or hung in a healthy partition: its dataflow's monitor must replace it. */
interface Pending {
  dataflow: string;
  partition: number;
  victim: string;
  atMs: number;
}

/**
 * Watches every takeover a replica fault calls for: once the record its monitor saves no
 * longer makes the victim primary (or the victim heals first), the wait is over. A wait past
 * {@link TAKEOVER_LIMIT_MS} while the dataflow's own monitor was up and quick is a violation:
 * something else held the takeover back.
 */
export class TakeoverWatch {
  readonly #pending = new Map<string, Pending>();
  readonly #violations: Violations;
  readonly #monitors: () => ReadonlyMap<string, SimMonitor>;
  /** Takeovers judged (their own monitor up and quick), the longest wait among them, and how many happened while another dataflow's monitor was down or slow. */
  readonly judged: { takeovers: number; longestMs: number; whileOtherDisturbed: number };

  constructor(violations: Violations, monitors: () => ReadonlyMap<string, SimMonitor>, judged: TakeoverWatch["judged"]) {
    this.#violations = violations;
    this.#monitors = monitors;
    this.judged = judged;
  }

  /** `victim`, the primary of `partition`, just crashed or hung. */
  expect(dataflow: string, partition: number, victim: string, nowMs: number): void {
    this.#pending.set(victim, { dataflow, partition, victim, atMs: nowMs });
  }

  /** `victim` is healed at `nowMs`: no takeover is owed any more, but one owed for longer than the limit was missed. */
  healed(victim: string, nowMs: number): void {
    const p = this.#pending.get(victim);
    this.#pending.delete(victim);
    if (p && nowMs - p.atMs > TAKEOVER_LIMIT_MS) this.#judge(p, nowMs);
  }

  /** The monitor of `record` saved it at `nowMs`. */
  saved(record: DataflowRecord, nowMs: number): void {
    for (const p of this.#pending.values()) {
      if (p.dataflow !== record.id || record.routes[p.partition]?.primary === p.victim) continue;
      this.#pending.delete(p.victim);
      this.#judge(p, nowMs);
    }
  }

  /** At the end of faults: a takeover still owed for longer than the limit was missed. */
  finish(nowMs: number): void {
    for (const victim of [...this.#pending.keys()]) this.healed(victim, nowMs);
  }

  #judge(p: Pending, nowMs: number): void {
    const waited = nowMs - p.atMs;
    const monitors = this.#monitors();
    if (monitors.get(p.dataflow)?.disturbedBetween(p.atMs, nowMs) !== false) return;
    this.judged.takeovers += 1;
    this.judged.longestMs = Math.max(this.judged.longestMs, waited);
    if ([...monitors].some(([id, m]) => id !== p.dataflow && m.disturbedBetween(p.atMs, nowMs))) this.judged.whileOtherDisturbed += 1;
    if (waited > TAKEOVER_LIMIT_MS) {
      this.#violations.add(
        "monitor-independent",
        `${p.dataflow} partition ${p.partition}: primary ${p.victim} failed at ${p.atMs} ms and was replaced only ${waited} ms later, while its own monitor was up and quick throughout (limit ${TAKEOVER_LIMIT_MS} ms)`,
      );
    }
  }
}
