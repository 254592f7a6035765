/**
 * The simulator's checks of stages (issue 27). While settling: every edge is caught up
 * (each stage partition holds every output of every upstream partition and its latest
 * watermark). After settling: per stage partition, both replicas agree, no record came
 * late, and its outputs and open results equal a fresh operator fed every upstream output
 * the stage's spec routes to it (in any order: the stages' aggregates commute), then
 * closed at the effective watermark its replicas hold. The first stage's outputs are
 * checked against the producers' batches by the golden run, so the last stage's results
 * are a single-node run over the acknowledged input, stage by stage.
 */
import { effectiveWatermark, expectedSources } from "../../shared/exchange/accept-delivery.ts";
import { sourceKey } from "../../shared/exchange/exchange-types.ts";
import { routeOutputs } from "../../shared/exchange/route-outputs.ts";
import { upstreamWatermark } from "../../shared/exchange/upstream-watermark.ts";
import { compileDataflow } from "../../shared/operators/compile.ts";
import { sourcesOf } from "../../shared/wire/dataflow-spec.ts";
import { compareResults, type FluxRecord, type WindowResult } from "../../shared/wire/window-result.ts";
import type { SimDataflow } from "./sim-dataflows.ts";
import type { SimWorld } from "./sim-world.ts";
import { keyGroupMapOf } from "../../shared/keygroups/key-groups.ts";

/** What upstream partition `partition` of `dataflow` has emitted, from its primary: its output count and watermark (null: down or empty). */
function upstreamNow(w: SimWorld, dataflow: SimDataflow, partition: number): { outputSeq: number; watermarkMs: number | null } | null {
  const route = dataflow.record().routes[partition];
  const state = route ? w.replicas.peek(route.primary) : null;
  if (!state) return null;
  const watermarkMs = upstreamWatermark({ watermarkMs: state.operator.watermarkMs(), closing: state.operator.closing(), firstDueEndMs: null });
  return { outputSeq: state.meta.outputSeq, watermarkMs };
}

/**
 * The windows a stage's watermark closes: ends every `slideMs`, closed once the clock passes
 * end + lateness. Two watermarks in one step close the same windows (upstreams send only a
 * watermark that reaches a new step, or one that comes with results).
 */
function closeStep(stage: SimDataflow, watermarkMs: number | null): number | null {
  const window = stage.spec.window;
  if (watermarkMs === null || !window) return watermarkMs;
  const slideMs = window.kind === "sliding" ? window.slideMs : window.sizeMs;
  return Math.floor((watermarkMs - window.allowedLatenessMs) / slideMs);
}

/** Why `stage` is not caught up with its upstreams yet (null: it is): a partition lacking outputs, or a watermark that closes windows. */
export function stageLag(w: SimWorld, stage: SimDataflow): string | null {
  for (const route of stage.record().routes) {
    const state = w.replicas.peek(route.primary);
    if (!state) return `${stage.id} partition ${route.partition} has no primary state`;
    for (const upstreamId of sourcesOf(stage.spec)) {
      const upstream = w.dataflow(upstreamId);
      for (const upRoute of upstream.record().routes) {
        const now = upstreamNow(w, upstream, upRoute.partition);
        const held = state.sources[sourceKey({ dataflow: upstreamId, partition: upRoute.partition })];
        if (!now) return `${upstreamId} partition ${upRoute.partition} has no primary state`;
        if ((held?.hw ?? 0) !== now.outputSeq || closeStep(stage, held?.watermarkMs ?? null) !== closeStep(stage, now.watermarkMs)) {
          return `${stage.id} partition ${route.partition} holds ${upstreamId}/${upRoute.partition} through output ${held?.hw ?? 0} at watermark ${held?.watermarkMs ?? null}, which has ${now.outputSeq} at ${now.watermarkMs}`;
        }
      }
    }
  }
  return null;
}

/** Every output of every upstream partition of `stage`, as its primary holds them (settled: both replicas hold the same), with its upstream. */
function upstreamOutputs(w: SimWorld, stage: SimDataflow): { upstream: string; outputs: { outputSeq: number; result: WindowResult }[] }[] {
  return sourcesOf(stage.spec).flatMap((upstream) => w.dataflow(upstream).record().routes.map((route) => ({ upstream, outputs: w.replicas.replica(route.primary).storage.outputs })));
}

/** The settled stage against its reference, partition by partition (see the module comment). */
export function checkStage(w: SimWorld, stage: SimDataflow): void {
  const routed = upstreamOutputs(w, stage).flatMap(({ upstream, outputs }) => routeOutputs(stage.spec, keyGroupMapOf(stage.record()), outputs, 256, { id: upstream, key: w.dataflow(upstream).spec.key }));
  for (const route of stage.record().routes) {
    const where = `${stage.id} partition ${route.partition}`;
    const primary = w.replicas.peek(route.primary);
    const standby = route.standby ? w.replicas.peek(route.standby) : null;
    if (!primary || !standby) {
      w.violations.add("settles", `${where}: settled without ${primary ? "a standby" : "a primary"}`);
      continue;
    }
    const outputs = (name: string) => JSON.stringify(w.replicas.replica(name).storage.outputs);
    const agree = outputs(route.primary) === outputs(route.standby ?? "") && JSON.stringify(primary.operator.openResults({})) === JSON.stringify(standby.operator.openResults({}));
    if (!agree || JSON.stringify(primary.sources) !== JSON.stringify(standby.sources)) w.violations.add("replicas-agree", `${where}: primary and standby hold different outputs, open results or progress`);
    const late = primary.operator.lateRecords();
    if (late > 0) w.violations.add("stage-no-late", `${where}: ${late} result(s) of its upstreams arrived after their window closed`);
    const mine = routed.flatMap((o) => (o.partition === route.partition && o.record !== null ? [o.record] : []));
    const watermarkMs = effectiveWatermark(primary.sources, expectedSources(sourcesOf(stage.spec), primary.sources));
    compareWithReference(w, where, stage, mine, watermarkMs, w.replicas.replica(route.primary).storage.outputs.map((o) => o.result), primary.operator.openResults({}));
  }
}

function compareWithReference(w: SimWorld, where: string, stage: SimDataflow, records: FluxRecord[], watermarkMs: number | null, outputs: WindowResult[], open: WindowResult[]): void {
  const operator = compileDataflow(stage.spec).bind(undefined);
  const emitted: WindowResult[] = [];
  operator.process(records, (r) => void emitted.push(r));
  if (watermarkMs !== null) operator.tick(watermarkMs, (r) => void emitted.push(r));
  const sorted = (results: WindowResult[]) => JSON.stringify([...results].sort(compareResults));
  if (sorted(emitted) !== sorted(outputs)) {
    w.violations.add("stage-exactly-once", `${where}: ${outputs.length} closed results ${sorted(outputs).slice(0, 300)}, the reference closes ${emitted.length}: ${sorted(emitted).slice(0, 300)} (watermark ${watermarkMs})`);
  } else if (sorted(operator.openResults({})) !== sorted(open)) {
    w.violations.add("stage-exactly-once", `${where}: open results ${sorted(open).slice(0, 300)}, the reference holds ${sorted(operator.openResults({})).slice(0, 300)}`);
  }
}
