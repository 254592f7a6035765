/**
 * Fault coverage over a range of seeds (issue 10): a histogram of replica faults per
 * seed and of fault kinds, printed by every suite and by `npm run sim`, and the minimums
 * a suite enforces so coverage cannot quietly regress.
 */
import type { FaultCoverage } from "./sim-world.ts";
import { hasStages, type Workload } from "./sim-dataflows.ts";

export interface CoverageSummary {
  seeds: number;
  /** Seeds by number of replica faults (index 3 counts 3 or more). */
  perSeed: number[];
  kinds: Record<string, number>;
  /** Seeds with a replica fault while a partition was recovering. */
  duringRecovery: number;
  /** Seeds that took both replicas of a partition down at least once. */
  bothDown: number;
  /** Replica faults in all, and those injected while producers were still writing. */
  faults: number;
  whileWriting: number;
  /** Seeds with a replica fault on a stage, resends after BACKPRESSURE, and seeds whose last stage held results (issue 27). */
  stageFaultSeeds: number;
  backpressure: number;
  stageResultSeeds: number;
  /** Takeovers judged by `monitor-independent` (issue 29), the longest wait, and those while another dataflow's monitor was down or slow. */
  takeovers: number;
  longestTakeoverMs: number;
  takeoversWhileOtherDisturbed: number;
  /** Key-group moves (issue 28): requested, finished and given up; seeds where one finished, and where a replica fault struck while one was under way. */
  moves: { requested: number; finished: number; givenUp: number; finishedSeeds: number; faultDuringSeeds: number };
}

export function emptyCoverage(): CoverageSummary {
  return { seeds: 0, perSeed: [0, 0, 0, 0], kinds: {}, duringRecovery: 0, bothDown: 0, faults: 0, whileWriting: 0, stageFaultSeeds: 0, backpressure: 0, stageResultSeeds: 0, takeovers: 0, longestTakeoverMs: 0, takeoversWhileOtherDisturbed: 0, moves: { requested: 0, finished: 0, givenUp: 0, finishedSeeds: 0, faultDuringSeeds: 0 } };
}

export function addCoverage(summary: CoverageSummary, seed: FaultCoverage): void {
  summary.seeds += 1;
  const bucket = Math.min(seed.replicaFaults, 3);
  summary.perSeed[bucket] = (summary.perSeed[bucket] ?? 0) + 1;
  for (const [kind, n] of Object.entries(seed.kinds)) summary.kinds[kind] = (summary.kinds[kind] ?? 0) + n;
  if (seed.duringRecovery > 0) summary.duringRecovery += 1;
  if (seed.bothDown > 0) summary.bothDown += 1;
  summary.faults += seed.replicaFaults;
  summary.whileWriting += seed.whileWriting;
  if (seed.stageFaults > 0) summary.stageFaultSeeds += 1;
  summary.backpressure += seed.backpressure;
  if (seed.stageResults > 0) summary.stageResultSeeds += 1;
  summary.takeovers += seed.takeovers.takeovers;
  summary.longestTakeoverMs = Math.max(summary.longestTakeoverMs, seed.takeovers.longestMs);
  summary.takeoversWhileOtherDisturbed += seed.takeovers.whileOtherDisturbed;
  summary.moves.requested += seed.moves.requested;
  summary.moves.finished += seed.moves.finished;
  summary.moves.givenUp += seed.moves.givenUp;
  if (seed.moves.finished > 0) summary.moves.finishedSeeds += 1;
  if (seed.moves.faultsDuring > 0) summary.moves.faultDuringSeeds += 1;
}

export function mergeCoverage(into: CoverageSummary, from: CoverageSummary): void {
  into.seeds += from.seeds;
  for (const [bucket, n] of from.perSeed.entries()) into.perSeed[bucket] = (into.perSeed[bucket] ?? 0) + n;
  for (const [kind, n] of Object.entries(from.kinds)) into.kinds[kind] = (into.kinds[kind] ?? 0) + n;
  into.duringRecovery += from.duringRecovery;
  into.bothDown += from.bothDown;
  into.faults += from.faults;
  into.whileWriting += from.whileWriting;
  into.stageFaultSeeds += from.stageFaultSeeds;
  into.backpressure += from.backpressure;
  into.stageResultSeeds += from.stageResultSeeds;
  into.takeovers += from.takeovers;
  into.longestTakeoverMs = Math.max(into.longestTakeoverMs, from.longestTakeoverMs);
  into.takeoversWhileOtherDisturbed += from.takeoversWhileOtherDisturbed;
  for (const key of ["requested", "finished", "givenUp", "finishedSeeds", "faultDuringSeeds"] as const) into.moves[key] += from.moves[key];
}

const pct = (n: number, of: number) => `${of === 0 ? 0 : Math.round((1000 * n) / of) / 10}%`;

export function formatCoverage(label: string, s: CoverageSummary): string {
  const [none = 0, one = 0, two = 0, more = 0] = s.perSeed;
  const kinds = Object.entries(s.kinds)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  return (
    `${label}: ${s.seeds} seeds; replica faults per seed: 0: ${none} (${pct(none, s.seeds)}), 1: ${one}, 2: ${two}, 3+: ${more} ` +
    `(2+: ${pct(two + more, s.seeds)}); a fault during recovery: ${s.duringRecovery} (${pct(s.duringRecovery, s.seeds)}); ` +
    `both down: ${s.bothDown} (${pct(s.bothDown, s.seeds)}); faults while producers write: ${pct(s.whileWriting, s.faults)}; kinds: ${kinds}` +
    `; takeovers timed: ${s.takeovers} (longest ${s.longestTakeoverMs} ms), ${s.takeoversWhileOtherDisturbed} while another dataflow's monitor was down or slow` +
    (s.stageResultSeeds > 0 ? `; stages: a fault on a stage in ${pct(s.stageFaultSeeds, s.seeds)} of seeds, results in the last stage in ${pct(s.stageResultSeeds, s.seeds)}, ${s.backpressure} resends after BACKPRESSURE` : "") +
    (s.moves.requested > 0
      ? `; moves: ${s.moves.requested} requested, ${s.moves.finished} finished, ${s.moves.givenUp} given up; a finished move in ${pct(s.moves.finishedSeeds, s.seeds)} of seeds, a replica fault during a move in ${pct(s.moves.faultDuringSeeds, s.seeds)}`
      : "")
  );
}

/** The minimums every suite holds (measured coverage is well above them; see docs/TESTING.md). */
const COVERAGE_MINIMUMS = { withFault: 0.95, twoOrMore: 0.3, duringRecovery: 0.2, stageFault: 0.4, stageResults: 0.9, takeoverWhileOtherMonitorFails: 0.05, finishedMove: 0.9, faultDuringMove: 0.3 } as const;

/** What falls short of the minimums; both-down runs must take both down in every seed. */
export function coverageProblems(s: CoverageSummary, bothDown: boolean, workload: Workload = "window"): string[] {
  const stages = hasStages(workload);
  const problems: string[] = [];
  const [none = 0, , two = 0, more = 0] = s.perSeed;
  if (s.seeds - none < COVERAGE_MINIMUMS.withFault * s.seeds) problems.push(`only ${s.seeds - none} of ${s.seeds} seeds injected a replica fault`);
  if (two + more < COVERAGE_MINIMUMS.twoOrMore * s.seeds) problems.push(`only ${two + more} of ${s.seeds} seeds injected two or more replica faults`);
  if (s.duringRecovery < COVERAGE_MINIMUMS.duringRecovery * s.seeds) problems.push(`only ${s.duringRecovery} of ${s.seeds} seeds injected a fault during recovery`);
  if (bothDown && s.bothDown !== s.seeds) problems.push(`only ${s.bothDown} of ${s.seeds} both-down seeds took both replicas down`);
  if (stages && s.stageFaultSeeds < COVERAGE_MINIMUMS.stageFault * s.seeds) problems.push(`only ${s.stageFaultSeeds} of ${s.seeds} seeds injected a fault on a stage`);
  if (stages && s.stageResultSeeds < COVERAGE_MINIMUMS.stageResults * s.seeds) problems.push(`only ${s.stageResultSeeds} of ${s.seeds} seeds ended with results in their last stage`);
  if (stages && s.backpressure === 0 && s.seeds >= 100) problems.push(`no producer met BACKPRESSURE in ${s.seeds} seeds`);
  // Several dataflows, so several monitors (issue 29): takeovers must be timed while another monitor is down or slow.
  if (stages && !bothDown && s.takeoversWhileOtherDisturbed < COVERAGE_MINIMUMS.takeoverWhileOtherMonitorFails * s.seeds) {
    problems.push(`only ${s.takeoversWhileOtherDisturbed} takeovers in ${s.seeds} seeds were timed while another dataflow's monitor was down or slow`);
  }
  if (workload === "moves" && s.moves.finishedSeeds < COVERAGE_MINIMUMS.finishedMove * s.seeds) problems.push(`only ${s.moves.finishedSeeds} of ${s.seeds} seeds finished a key-group move`);
  if (workload === "moves" && s.moves.faultDuringSeeds < COVERAGE_MINIMUMS.faultDuringMove * s.seeds) problems.push(`only ${s.moves.faultDuringSeeds} of ${s.seeds} seeds injected a replica fault while a move was under way`);
  return problems;
}
