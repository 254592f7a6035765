/**
 * A request to change a running dataflow's partition count (issue 28), as the monitor
 * plans it: new partitions get replica pairs of their own, and moves of a few key groups
 * each (`advance-move.ts`) give every partition an even share of the groups, taken from
 * those holding the most. Only growing is planned so far; the moves run while ingest goes on.
 */
import { keyGroupMapOf, ownerOf } from "../keygroups/key-groups.ts";
import { compileDataflow } from "../operators/compile.ts";
import { replicaName } from "../names.ts";
import type { DataflowRecord, KeyGroupMove, PartitionRoute } from "../wire/routing.ts";

/** Most key groups one move carries: only a moving group's records wait, so small moves keep each pause short. */
export const GROUPS_PER_MOVE = 4;

/** Why a rescale cannot be planned: a message a person can act on. */
export type RescaleRefusal = { refused: string; code: "RESCALE_IN_PROGRESS" | "SPEC_CONFLICT" };

/**
 * Grows `record` (mutated) to `partitions` partitions: appends their routes (replicas of
 * generation 0, and 1 at replication 2, at the highest epoch the dataflow has reached),
 * writes its key-group owners out, sets its spec's partition count and queues the moves.
 * @returns the new routes, whose replicas must be created before the moves can run; or why not.
 */
export function planGrowth(record: DataflowRecord, partitions: number, nowMs: number, locationHints: readonly string[] = []): { routes: PartitionRoute[] } | RescaleRefusal {
  const refusal = growthRefusal(record, partitions);
  if (refusal) return refusal;
  const map = keyGroupMapOf(record);
  const owners = Array.from({ length: map.groups }, (_, g) => ownerOf(map, g));
  const epoch = Math.max(...record.routes.map((r) => r.epoch));
  const hint = (i: number) => (locationHints.length === 0 ? null : (locationHints[i % locationHints.length] ?? null));
  const routes = Array.from({ length: partitions - record.routes.length }, (_, i): PartitionRoute => {
    const partition = record.routes.length + i;
    const primary = replicaName(record.id, partition, 0);
    const standby = record.spec.replication === 2 ? replicaName(record.id, partition, 1) : null;
    const hints: Record<string, string | null> = { [primary]: hint(partition) };
    if (standby) hints[standby] = hint(partition + 1);
    return { partition, epoch, primary, standby, status: "healthy", version: 1, nextGeneration: 2, retired: [], hints, recovery: null };
  });
  record.routes = [...record.routes, ...routes];
  record.keyGroups = { groups: map.groups, owners };
  record.spec = { ...record.spec, partitions };
  queueEvenShares(record, owners, nowMs);
  return { routes };
}

/**
 * Queues the moves that even out the groups of `record` (mutated) over its partitions, when
 * none is under way: what a rescale whose moves were given up (a target unavailable) still
 * owes. @returns how many it queued (0: the shares are even, or moves are under way).
 */
export function planRebalance(record: DataflowRecord, nowMs: number): number {
  if (record.moves.length > 0 || record.spec.from !== undefined || record.readers.length > 0 || !isMovable(record)) return 0;
  const map = keyGroupMapOf(record);
  const owners = Array.from({ length: map.groups }, (_, g) => ownerOf(map, g));
  return queueEvenShares(record, owners, nowMs);
}

function queueEvenShares(record: DataflowRecord, owners: number[], nowMs: number): number {
  const moves = evenShares(owners, record.routes.length);
  if (moves.length > 0) record.keyGroups = { groups: owners.length, owners };
  for (const move of moves) {
    record.moves.push({ id: record.nextMove, ...move, phase: "release", startedAtMs: nowMs, releasedAtMs: null, switchedAtMs: null, failure: null });
    record.nextMove += 1;
  }
  return moves.length;
}

function isMovable(record: DataflowRecord): boolean {
  return compileDataflow(record.spec).bind(undefined).movable;
}

function growthRefusal(record: DataflowRecord, partitions: number): RescaleRefusal | null {
  const id = record.id;
  const unsupported = (refused: string): RescaleRefusal => ({ refused, code: "SPEC_CONFLICT" });
  if (record.spec.from !== undefined || record.readers.length > 0) {
    const why = record.spec.from !== undefined ? "it is a stage" : `stages read it (${record.readers.join(", ")})`;
    return unsupported(`dataflow '${id}' cannot change its partition count while ${why}: an exchange between stages tracks each upstream partition, and moving it is not built yet`);
  }
  if (partitions < record.routes.length) {
    return unsupported(`dataflow '${id}' has ${record.routes.length} partitions: lowering the count is not built yet (only growing it is); delete and recreate it, or keep ${record.routes.length}`);
  }
  const { groups } = keyGroupMapOf(record);
  if (partitions > groups) return unsupported(`dataflow '${id}' has ${groups} key groups, so at most ${groups} partitions`);
  if (!isMovable(record)) {
    const name = record.spec.operator?.name ?? "";
    return unsupported(`dataflow '${id}' runs the custom operator '${name}', which cannot hand keys' state to another partition (it defines no \`moves\`; see docs/OPERATORS.md): its partition count cannot change`);
  }
  if (record.moves.length > 0) {
    return { refused: `dataflow '${id}' is still moving key groups (${record.moves.length} moves left); send the new partition count once they are done (GET /v1/status shows them)`, code: "RESCALE_IN_PROGRESS" };
  }
  return null;
}

/**
 * Moves (at most {@link GROUPS_PER_MOVE} groups each) that leave every one of `partitions`
 * partitions with an even share of the groups, given each group's owner: the first
 * `groups mod partitions` partitions hold one more. Groups leave the partition holding the
 * most above its share first, highest group first.
 */
function evenShares(owners: readonly number[], partitions: number): Pick<KeyGroupMove, "groups" | "from" | "to">[] {
  const held = Array.from({ length: partitions }, (_, p) => owners.flatMap((owner, g) => (owner === p ? [g] : [])));
  const share = (p: number) => Math.floor(owners.length / partitions) + (p < owners.length % partitions ? 1 : 0);
  const moves: Pick<KeyGroupMove, "groups" | "from" | "to">[] = [];
  for (let to = 0; to < partitions; to++) {
    while ((held[to]?.length ?? 0) < share(to)) {
      const from = held.reduce((best, list, p) => (list.length - share(p) > (held[best]?.length ?? 0) - share(best) ? p : best), 0);
      const surplus = (held[from]?.length ?? 0) - share(from);
      const count = Math.min(GROUPS_PER_MOVE, share(to) - (held[to]?.length ?? 0), surplus);
      if (count <= 0) break;
      const groups = (held[from] ?? []).splice(-count).sort((a, b) => a - b);
      held[to]?.push(...groups);
      moves.push({ groups, from, to });
    }
  }
  return moves;
}
