/**
 * Deliberately broken variants of the protocol, to prove the simulator has teeth
 * (issues 4, 10). Each is injected around the real code by hooks (`variant-hooks.ts`),
 * so no switch for them exists anywhere in product code or configuration. Each names the
 * invariant it breaks, the runs (fault mode and workload) in which it must be caught, and
 * per run the most seeds the simulator may need: about 5× the seeds it took when measured.
 */
import type { Workload } from "./sim-dataflows.ts";
import { ackWholeGroup, acksEarly, answerPendingAtOnce, applyUnstable, doubleOnStandby, dropTicks, pageFromCursor, pageSkipsFirst, pageWithOpenWindow, logToStoredLsn, outputsWithoutProgress, pastGaps, shiftWindow, trimEarly, unfenced, withoutDedup, type VariantHooks } from "./variant-hooks.ts";
import { adoptPartialSeed, progressPastHeld } from "./variant-hooks-seed.ts";
import { replicateCurrentValues, trimAtCheckpointBegin, writeCurrentValues } from "./variant-hooks-checkpoint.ts";
import { applyCloseAtOnce, closedKeysOpen, dropClosedThrough } from "./variant-hooks-close.ts";
import { hideUnavailable, keepEpochOnTakeover, resumeFromLowest } from "./variant-hooks-monitor.ts";
import { dropSourceProgress, keepRedelivered, watermarkOnEveryDelivery } from "./variant-hooks-stages.ts";
import { adoptAnsweredEarly, adoptWithoutJudges, switchAtRelease } from "./variant-hooks-moves.ts";
import type { Invariant } from "./violations.ts";

/** A fault mode and workload a variant runs in. */
export interface VariantRun {
  bothDown?: boolean;
  workload?: Workload;
  /** Seeds the simulator may take to catch the variant in this run. */
  bound: number;
}

interface VariantSpec {
  what: string;
  /** The invariants the variant breaks: a run counts as caught only when each of these is violated (in any of its seeds). */
  breaks: readonly Invariant[];
  runs: readonly VariantRun[];
  hooks: (tuning: { dedupWindow: number }) => VariantHooks;
}

export const VARIANTS = {
  "no-dedup": {
    what: "replicas never recognise a resent (producer, seq)",
    breaks: ["exactly-once"],
    runs: [{ bound: 5 }, { bothDown: true, bound: 5 }, { workload: "heavy-hitters", bound: 5 }, { workload: "ticks", bound: 5 }, { workload: "moves", bound: 5 }],
    hooks: ({ dedupWindow }) => ({ write: withoutDedup(dedupWindow) }),
  },
  "no-fencing": {
    what: "replicas accept calls from any epoch and whatever role they hold",
    breaks: ["zombie-write"],
    runs: [{ bound: 70 }, { workload: "heavy-hitters", bound: 70 }, { workload: "ticks", bound: 25 }],
    hooks: () => ({ write: unfenced("primary"), flush: unfenced("primary"), replicate: unfenced("standby"), readLog: unfenced("primary") }),
  },
  "unstable-outputs": {
    what: "the primary treats entries as stable before the standby holds them",
    breaks: ["stable-prefix"],
    runs: [{ bound: 5 }, { bothDown: true, bound: 5 }, { workload: "heavy-hitters", bound: 5 }, { workload: "ticks", bound: 5 }],
    hooks: () => ({ write: applyUnstable }),
  },
  "out-of-order-standby": {
    what: "the standby applies entries past a gap instead of waiting for it to be filled",
    breaks: ["stable-log"],
    // Both down: measured at seed 15 since checkpoints come in slices (issue 12); one down at
    // seed 14 since recovery asks the fresh replica for its seed progress and sizes catch-up pages;
    // ticks at seed 12 since closes are spread over log entries (issue 12); both down at seed 38
    // once monitors fail on their own (issue 29).
    runs: [{ bound: 70 }, { bothDown: true, bound: 190 }, { workload: "ticks", bound: 60 }],
    hooks: () => ({ replicate: pastGaps }),
  },
  "standby-acks-early": {
    what: "the standby answers that it holds entries it has not stored",
    breaks: ["replicated-ack"],
    runs: [{ bound: 5 }, { workload: "heavy-hitters", bound: 5 }],
    hooks: () => ({ replicate: acksEarly }),
  },
  "early-group-ack": {
    what: "the primary counts a whole forwarded group as held when the standby received only part of it",
    breaks: ["replicated-ack"],
    runs: [{ bound: 35 }],
    hooks: () => ({ forward: ackWholeGroup }),
  },
  "early-duplicate-answer": {
    what: "the primary answers a resent batch whose entry is still pending at once, before it is stable",
    breaks: ["replicated-ack"],
    // Measured at seed 9 once monitors follow their schedules (issue 29).
    runs: [{ bound: 45 }],
    hooks: () => ({ write: answerPendingAtOnce }),
  },
  "promotion-without-fencing": {
    what: "the monitor promotes the standby without a new epoch",
    breaks: ["one-writer-per-epoch"],
    // Ticks: measured at seed 7 since closes are spread over log entries (issue 12).
    runs: [{ bound: 35 }, { workload: "ticks", bound: 35 }],
    hooks: () => ({ save: keepEpochOnTakeover }),
  },
  "early-log-trim": {
    what: "replicas trim their log before the standby acknowledged and before a checkpoint",
    breaks: ["replicas-agree", "exception"],
    // Measured at seeds 1 and 2 once monitors follow their schedules (issue 29).
    runs: [{ bound: 10 }],
    hooks: () => ({ storage: trimEarly }),
  },
  "log-to-stored-lsn": {
    what: "a restarted replica takes the stored LSN as its last, ignoring log rows written after the progress row",
    breaks: ["replicated-ack"],
    // Measured at seed 41 once monitors follow their schedules (issue 29).
    runs: [{ bound: 205 }],
    hooks: () => ({ storage: logToStoredLsn }),
  },
  "outputs-without-progress": {
    what: "a step that emits outputs leaves the stored output count as it was (until the next checkpoint)",
    breaks: ["exception"],
    // Measured at seed 12 since closes are spread over log entries (issue 12).
    runs: [{ bound: 60 }],
    hooks: () => ({ storage: outputsWithoutProgress }),
  },
  "cursor-repeat": {
    what: "an output page starts at the reader's cursor instead of after it",
    breaks: ["cursor-repeat"],
    runs: [{ bound: 5 }, { workload: "ticks", bound: 5 }],
    hooks: () => ({ readOutputPage: pageFromCursor }),
  },
  "cursor-skip": {
    what: "a page of several outputs leaves out its first",
    breaks: ["cursor-skip"],
    runs: [{ bound: 5 }, { workload: "heavy-hitters", bound: 5 }],
    hooks: () => ({ readOutputPage: pageSkipsFirst }),
  },
  "cursor-retract": {
    what: "a reader at the end of the stream also gets an open window as the next output",
    breaks: ["cursor-retract"],
    runs: [{ bound: 5 }, { workload: "ticks", bound: 5 }],
    hooks: () => ({ readOutputPage: pageWithOpenWindow }),
  },
  "both-down-available": {
    what: "a partition with both replicas down is reported degraded, not unavailable",
    breaks: ["unavailable"],
    runs: [{ bothDown: true, bound: 5 }],
    hooks: () => ({ save: hideUnavailable }),
  },
  "resume-from-wrong-replica": {
    what: "with both replicas down, the partition resumes from any replica it ever had that answers, lowest LSN first",
    breaks: ["exactly-once"],
    // Measured at seed 3 once monitors fail on their own (issue 29).
    runs: [{ bothDown: true, bound: 15 }],
    hooks: () => ({ save: resumeFromLowest() }),
  },
  "dropped-tick-on-standby": {
    what: "the standby logs the clock ticks it is sent, but its operator ignores them",
    breaks: ["replicas-agree"],
    runs: [{ workload: "ticks", bound: 5 }],
    hooks: () => ({ replicate: dropTicks }),
  },
  "heavy-hitters-divergence": {
    what: "the standby's heavy-hitters operator counts every byte twice",
    breaks: ["replicas-agree"],
    runs: [{ workload: "heavy-hitters", bound: 5 }],
    hooks: () => ({ replicate: doubleOnStandby }),
  },
  "late-by-a-window": {
    what: "the router puts every record 100 ms later than its time (both replicas agree, every record is counted)",
    breaks: ["golden"],
    runs: [{ bound: 5 }, { workload: "heavy-hitters", bound: 5 }],
    hooks: () => ({ route: shiftWindow }),
  },
  "partial-seed": {
    what: "a fresh replica adopts the seed's state restored without its last slice, while storage installs all of it",
    breaks: ["replicas-agree"],
    runs: [{ bound: 5 }, { workload: "heavy-hitters", bound: 5 }],
    hooks: () => ({ finishSeed: adoptPartialSeed }),
  },
  "resume-skips-chunk": {
    what: "a resumed seed skips the first chunk the fresh replica lacks, which holds a copy of the chunk before in its place",
    breaks: ["replicas-agree"],
    // Measured at seeds 3 and 1 once monitors fail on their own (issue 29).
    runs: [{ bound: 15 }, { workload: "heavy-hitters", bound: 5 }],
    hooks: () => ({ seedProgress: progressPastHeld }),
  },
  "checkpoint-current-values": {
    what: "a checkpoint spread over steps writes its later slices from the current state instead of the state as of its LSN",
    breaks: ["replicas-agree"],
    // Measured at seed 25 once monitors fail on their own (issue 29).
    runs: [{ bound: 125 }],
    hooks: () => ({ write: writeCurrentValues, replicate: replicateCurrentValues }),
  },
  "trim-before-checkpoint-complete": {
    what: "a replica trims its log through a spread checkpoint's LSN when the checkpoint begins, not when its last slice is written",
    breaks: ["replicas-agree"],
    // Measured at seed 11 once monitors fail on their own (issue 29).
    runs: [{ bound: 55 }],
    hooks: () => ({ storage: trimAtCheckpointBegin }),
  },
  "close-progress-not-checkpointed": {
    what: "checkpoints taken while a close is spread over steps leave out how far it has gone (closedThrough)",
    // A replica restored from such a checkpoint emits the closed keys again: a fresh one seeded from it disagrees with its primary.
    breaks: ["replicas-agree"],
    // Measured at seed 7 (window) and 1 (ticks) when added; ticks at seed 35 once monitors fail on their own and follow their schedules (issue 29).
    runs: [{ bound: 35 }, { workload: "ticks", bound: 175 }],
    hooks: () => ({ storage: dropClosedThrough }),
  },
  "closed-keys-open": {
    what: "open results of a window whose close is spread over steps include the keys it has already emitted",
    breaks: ["results-once"],
    // Measured at seed 5 (window) when added.
    runs: [{ bound: 25 }, { workload: "ticks", bound: 25 }],
    hooks: () => ({ operator: closedKeysOpen }),
  },
  "close-entry-unreplicated": {
    what: "the primary applies the close entry it logs itself at once, without waiting for the standby to hold it",
    breaks: ["stable-prefix"],
    // Measured at seed 1 (window) when added; at seeds 7 and 7 once monitors fail on their own (issue 29).
    runs: [{ bound: 35 }, { workload: "ticks", bound: 35 }],
    hooks: () => ({ later: applyCloseAtOnce }),
  },
  "stage-forgets-progress": {
    what: "a stage's checkpoints leave out what it holds of each upstream partition: a replica restored from one counts redelivered results again",
    // A fresh standby seeded from such a checkpoint disagrees with its primary; a primary that
    // comes back from both replicas down counts what its upstreams deliver again.
    breaks: ["replicas-agree", "stage-exactly-once"],
    // Measured at seeds 2, 3 and 3 (the later of its two invariants) when added.
    // Pipeline2 at seed 6 once monitors fail on their own (issue 29).
    runs: [{ workload: "pipeline2", bothDown: true, bound: 30 }, { workload: "pipeline3", bothDown: true, bound: 15 }, { workload: "join", bothDown: true, bound: 15 }],
    hooks: () => ({ storage: dropSourceProgress }),
  },
  "stage-keeps-redelivered": {
    what: "a stage primary takes results it already holds, resent after a lost answer, for new ones and counts them again",
    breaks: ["stage-exactly-once"],
    // Measured at seeds 3, 1 and 1 when added.
    runs: [{ workload: "pipeline2", bound: 15 }, { workload: "pipeline3", bound: 5 }, { workload: "join", bound: 5 }],
    hooks: () => ({ deliver: keepRedelivered }),
  },
  "monitors-share-fate": {
    what: "every dataflow's monitor runs in one object, as before issue 29: a tick waits while any monitor is down and is as slow as the slowest",
    breaks: ["monitor-independent"],
    // Measured at seeds 28, 5 and 8 when added (one dataflow has no other monitor to wait for).
    runs: [{ workload: "pipeline2", bound: 140 }, { workload: "pipeline3", bound: 25 }, { workload: "join", bound: 40 }],
    hooks: () => ({ monitorsOf: (_own, all) => all }),
  },
  "stage-watermark-early": {
    what: "an upstream primary puts its watermark on a delivery bounded before its last output",
    breaks: ["stage-no-late", "stage-exactly-once"],
    // Measured at seed 1 in each when added; 1, 2 and 2 once monitors follow their schedules (issue 29).
    runs: [{ workload: "pipeline2", bound: 5 }, { workload: "pipeline3", bound: 10 }, { workload: "join", bound: 10 }],
    hooks: () => ({ sendDelivery: watermarkOnEveryDelivery }),
  },
  "switch-before-adopt": {
    what: "the monitor routes a moving key group to its target as soon as the source released it, before the target holds its state",
    breaks: ["exactly-once"],
    // Measured at seed 6 when added.
    runs: [{ workload: "moves", bound: 30 }],
    hooks: () => ({ save: switchAtRelease }),
  },
  "adopt-answered-early": {
    what: "the target primary answers an adopt once logged, before its standby holds it, so the source forgets its copy too early",
    breaks: ["exactly-once"],
    // Measured at seed 6 when added: it needs the target primary to fail before its standby holds the adopt.
    runs: [{ workload: "moves", bound: 45 }],
    hooks: () => ({ moveStep: adoptAnsweredEarly }),
  },
  "adopt-without-judges": {
    what: "an adopt carries a key group's state without the dedup memory that judged its records",
    breaks: ["exactly-once"],
    // Measured at seed 3 when added.
    runs: [{ workload: "moves", bound: 15 }],
    hooks: () => ({ moveStep: adoptWithoutJudges }),
  },
} as const satisfies Record<string, VariantSpec>;

export type Variant = keyof typeof VARIANTS;

export function isVariant(name: string): name is Variant {
  return Object.hasOwn(VARIANTS, name);
}

export function variantHooks(variant: Variant | null, tuning: { dedupWindow: number }): VariantHooks {
  if (variant === null) return {};
  const spec: VariantSpec = VARIANTS[variant];
  return spec.hooks(tuning);
}
