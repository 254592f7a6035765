/**
 * Broken variants of the exchange between stages (issue 27), injected around the real
 * code like the others (`variant-hooks.ts`): around a replica's storage, around an
 * upstream primary's sending of a delivery, and around a stage primary's answer to one.
 */
import { upstreamWatermark } from "../../shared/exchange/upstream-watermark.ts";
import type { Deliver, DeliverReply } from "../../shared/wire/replica-rpc.ts";
import type { MemoryReplicaStorage } from "../helpers/memory-replica-storage.ts";
import type { ReplicaState } from "../../shared/replica/replica-state.ts";
import { sourceKey } from "../../shared/exchange/exchange-types.ts";
import type { StageNode } from "../../shared/stages/stage-node.ts";

/**
 * stage-forgets-progress: a stage's checkpoints leave out what it holds of each upstream
 * partition (`sources`). Restored from one (a restart, or a fresh replica seeded from it),
 * it holds nothing from any source: the upstream's probe learns `hw` 0 and redelivers
 * everything, which it counts again.
 */
export function dropSourceProgress(storage: MemoryReplicaStorage): void {
  const persist = storage.persist.bind(storage);
  const strip = (pieces: string[]) => pieces.map((piece, i) => (i === 0 ? withoutSources(piece) : piece));
  storage.persist = (meta, effects) => {
    const { checkpoint, checkpointStage: stage } = effects;
    persist(meta, {
      ...effects,
      ...(checkpoint ? { checkpoint: { ...checkpoint, pieces: strip(checkpoint.pieces) } } : {}),
      ...(stage?.begin ? { checkpointStage: { ...stage, pieces: strip(stage.pieces) } } : {}),
    });
  };
}

function withoutSources(header: string): string {
  const parsed = JSON.parse(header) as Record<string, unknown>;
  if (parsed.sources === undefined) return header;
  delete parsed.sources;
  return JSON.stringify(parsed);
}

/**
 * stage-watermark-early: an upstream primary puts its watermark on every delivery, also on
 * one bounded before its last output (the records after the bound may be older than the
 * watermark): the stage closes windows those records still belong to.
 */
export function watermarkOnEveryDelivery(sender: ReplicaState | null, msg: Deliver, run: (msg: Deliver) => Promise<DeliverReply>): Promise<DeliverReply> {
  if (!sender || msg.delivery.watermarkMs !== null || msg.delivery.toSeq === 0) return run(msg);
  const watermarkMs = upstreamWatermark({ watermarkMs: sender.operator.watermarkMs(), closing: sender.operator.closing(), firstDueEndMs: null });
  return run({ ...msg, delivery: { ...msg.delivery, watermarkMs } });
}

/**
 * stage-keeps-redelivered: a stage primary takes a redelivery (results it already holds,
 * resent after a lost answer or a timeout) for new results: it renumbers them above what
 * it holds, and counts them again.
 */
export function keepRedelivered(node: StageNode, msg: Deliver, run: (msg: Deliver) => Promise<DeliverReply>): Promise<DeliverReply> {
  const { delivery } = msg;
  const held = node.host.load()?.sources[sourceKey(delivery.source)]?.hw ?? 0;
  if (delivery.records.length === 0 || delivery.fromSeq >= held) return run(msg);
  const shift = held - delivery.fromSeq;
  const renumbered = { ...delivery, fromSeq: held, toSeq: delivery.toSeq + shift, outputSeqs: delivery.outputSeqs.map((seq) => seq + shift) };
  return run({ ...msg, delivery: renumbered });
}
