/**
 * The monitor objects of a simulated run (issue 29): one per dataflow, each ticking on its
 * own loop (`sim-monitor-loop.ts`) by its own schedule, each down, slow or restarted on its
 * own; and the check that a takeover in one dataflow never waits for another dataflow's
 * monitor (`monitor-independent`).
 */
import { MonitorSchedule } from "../../shared/monitor/probe-schedule.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import type { ReleasedMemo } from "../../shared/moves/advance-move.ts";
import type { Violations } from "./violations.ts";

/**
 * The monitors' settings in the simulator, in simulated ms: a heartbeat of 50, a dataflow the
 * data path watches probed every 200 (issue 29), idle after 1 s without progress and then
 * probed at most 2 s apart, two misses at least 25 apart to fail a replica.
 */
export const SIM_TUNING = { heartbeatMs: 50, watchProbeMs: 200, idleAfterMs: 1_000, idleProbeMs: 2_000, missSpacingMs: 25, failAfterMisses: 2, locationHints: [] } as const;

/**
 * How long a primary that crashed or hung may go without a takeover, counted from when its
 * monitor should look (its schedule's due time when the fault struck, or the first report
 * of a failed call that reached the monitor, whichever is sooner), while its own monitor
 * was up and quick throughout: measured over the `npm test` seeds of every workload (see
 * docs/TESTING.md), with room to spare. A monitor outage lasts 200-1000 ms, so a takeover
 * that waits for another dataflow's monitor mostly misses it.
 */
const TAKEOVER_LIMIT_MS = 300;

/** One dataflow's monitor object: whether it answers, how slow it is, whether its next tick dies. */
export class SimMonitor {
  up = true;
  /** Extra delay of each call its ticks make while slow (0: not slow). */
  slowMs = 0;
  /** A tick is running: requests to the object wait for it (the object runs one at a time). */
  ticking = false;
  /** Its next tick dies part-way (the object restarted mid-tick), and its schedule is lost. */
  restartPending = false;
  /** What it keeps in memory: when each dataflow is due, and the reports since its last tick. */
  schedule = new MonitorSchedule(SIM_TUNING, () => null);
  /** What its moves' releases took (memory only: a restart loses it). */
  released: ReleasedMemo = new Map();
  /** When its loop should run the alarm next: its alarm's time, or sooner after a report (simulated ms). */
  wakeAtMs = Number.NEGATIVE_INFINITY;

  /** When it received reports of failed calls (in order). */
  readonly #reports: number[] = [];

  /** A router, reader or upstream primary reports a failed call to `replica`: probe now (lost while the object is down). */
  report(replica: string | null, nowMs: number): void {
    if (!this.up) return;
    this.#reports.push(nowMs);
    this.wakeAtMs = Math.min(this.wakeAtMs, this.schedule.report(replica, nowMs));
  }

  /**
   * From when it had reason to look at something that failed at `atMs`: its alarm's time
   * then (`dueAtMs`), or the first report it received since, whichever is sooner.
   */
  owedFrom(atMs: number, dueAtMs: number): number {
    const reported = this.#reports.find((t) => t >= atMs) ?? Number.POSITIVE_INFINITY;
    return Math.max(atMs, Math.min(dueAtMs, reported));
  }

  /** Its alarm ran; `nextAtMs` is when it is armed next (null: nothing to watch). */
  ticked(nextAtMs: number | null): void {
    this.wakeAtMs = nextAtMs ?? Number.POSITIVE_INFINITY;
  }

  /** The object restarted: it forgets its schedule; the alarm it had armed fires at once. */
  restart(): void {
    this.schedule = new MonitorSchedule(SIM_TUNING, () => null);
    this.released = new Map();
    this.wakeAtMs = Number.NEGATIVE_INFINITY;
  }
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
  /** When the monitor's alarm was to run as the fault struck. */
  dueAtMs: number;
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

  /** `victim`, the primary of `partition`, just crashed or hung; the dataflow was due at `dueAtMs`. */
  expect(dataflow: string, partition: number, victim: string, nowMs: number, dueAtMs: number): void {
    this.#pending.set(victim, { dataflow, partition, victim, atMs: nowMs, dueAtMs });
  }

  /** From when a takeover is owed: the fault, or later if the monitor had no reason to look yet. */
  #owedFrom(p: Pending): number {
    return this.#monitors().get(p.dataflow)?.owedFrom(p.atMs, p.dueAtMs) ?? p.atMs;
  }

  /** `victim` is healed at `nowMs`: no takeover is owed any more, but one owed for longer than the limit was missed. */
  healed(victim: string, nowMs: number): void {
    const p = this.#pending.get(victim);
    this.#pending.delete(victim);
    if (p && nowMs - this.#owedFrom(p) > TAKEOVER_LIMIT_MS) this.#judge(p, nowMs);
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
    const waited = nowMs - this.#owedFrom(p);
    const monitors = this.#monitors();
    if (monitors.get(p.dataflow)?.disturbedBetween(p.atMs, nowMs) !== false) return;
    this.judged.takeovers += 1;
    this.judged.longestMs = Math.max(this.judged.longestMs, waited);
    if ([...monitors].some(([id, m]) => id !== p.dataflow && m.disturbedBetween(p.atMs, nowMs))) this.judged.whileOtherDisturbed += 1;
    if (waited > TAKEOVER_LIMIT_MS) {
      this.#violations.add(
        "monitor-independent",
        `${p.dataflow} partition ${p.partition}: primary ${p.victim} failed at ${p.atMs} ms (its monitor had reason to look from ${this.#owedFrom(p)} ms) and was replaced only ${waited} ms after that, while its own monitor was up and quick throughout (limit ${TAKEOVER_LIMIT_MS} ms)`,
      );
    }
  }
}
