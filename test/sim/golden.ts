/**
 * The golden run (issue 10): after a seed settles, each partition's stored outputs and
 * open results must equal those of a fresh operator fed, in the partition's stable log
 * order, the batches the producers actually sent (their events, routed afresh) and the
 * clock ticks. Values, windows and keys are compared, not counts; the same pass checks
 * at the log level that no batch was logged twice and none acknowledged is missing.
 */
import { routeEvents } from "../../shared/ingest/route-events.ts";
import { compileDataflow } from "../../shared/operators/compile.ts";
import { tickTimeOf } from "../../shared/replica/clock-ticks.ts";
import { isCloseEntry } from "../../shared/closing/close-entry.ts";
import type { DataflowSpec } from "../../shared/wire/dataflow-spec.ts";
import type { LogEntry } from "../../shared/wire/persisted.ts";
import type { WindowResult } from "../../shared/wire/window-result.ts";
import type { Batch } from "./sim-world.ts";
import type { Violations } from "./violations.ts";
import type { KeyGroupMap } from "../../shared/keygroups/key-groups.ts";

/** What the golden run compares against: the settled primary's state. */
export interface GoldenInput {
  spec: DataflowSpec;
  /** The dataflow's key groups (`keyGroupMapOf` its record). */
  groups: KeyGroupMap;
  partition: number;
  log: readonly LogEntry[];
  batches: ReadonlyMap<string, Batch>;
  acked: ReadonlyMap<string, Batch>;
  outputs: readonly WindowResult[];
  openResults: readonly WindowResult[];
}

export function checkGolden(input: GoldenInput, violations: Violations): void {
  const where = `partition ${input.partition}`;
  const operator = compileDataflow(input.spec).bind(undefined);
  const emitted: WindowResult[] = [];
  const emit = (r: WindowResult) => void emitted.push(r);
  const loggedAt = new Map<string, number>();
  for (const entry of input.log) {
    // A close entry (the primary's own, while a close is spread over steps) is no batch: a fresh operator closes all at once.
    if (isCloseEntry(entry)) {
      if (entry.records !== "[]") violations.add("golden", `${where}: close entry at LSN ${entry.lsn} holds records`);
      continue;
    }
    const tickMs = tickTimeOf(entry, input.spec.idleAdvanceMs);
    if (tickMs !== null) {
      operator.tick(tickMs, emit);
      continue;
    }
    const id = `${entry.producer}#${entry.seq}`;
    const first = loggedAt.get(id);
    if (first !== undefined) violations.add("exactly-once", `${where}: ${id} logged twice, at LSN ${first} and ${entry.lsn}`);
    loggedAt.set(id, entry.lsn);
    const batch = input.batches.get(id);
    if (!batch) {
      violations.add("golden", `${where}: LSN ${entry.lsn} holds ${id}, which no producer sent`);
      continue;
    }
    if (first === undefined) operator.process(routeEvents(input.spec, batch.events, 0, 256, input.groups).get(input.partition) ?? [], emit);
  }
  for (const [id, batch] of input.acked) {
    const mine = routeEvents(input.spec, batch.events, 0, 256, input.groups).has(input.partition);
    if (mine && !loggedAt.has(id)) violations.add("exactly-once", `${where}: acknowledged ${id} is not in the stable log`);
  }
  compare(where, "output", emitted, input.outputs, violations);
  compare(where, "open result", operator.openResults({}), input.openResults, violations);
}

function compare(where: string, what: string, expected: readonly WindowResult[], actual: readonly WindowResult[], violations: Violations): void {
  const length = Math.max(expected.length, actual.length);
  for (let i = 0; i < length; i++) {
    const want = JSON.stringify(expected[i] ?? null);
    const got = JSON.stringify(actual[i] ?? null);
    if (want !== got) {
      violations.add("golden", `${where}: ${what} ${i + 1} of ${actual.length} is ${got}, the golden run gives ${want} (of ${expected.length})`);
      return;
    }
  }
}
