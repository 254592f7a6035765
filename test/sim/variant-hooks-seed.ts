/**
 * Broken variants of seeding in slices (issue 12), injected around `finishSeed` like the
 * others (`variant-hooks.ts`).
 */
import { CheckpointBuilder } from "../../shared/checkpoint/checkpoint-pieces.ts";
import type { ReplicaHost } from "../../shared/replica/replica-host.ts";
import type { FinishSeed, FinishSeedReply, SeedProgressReply } from "../../shared/wire/replica-rpc.ts";

/**
 * partial-seed: the fresh replica adopts a state restored without the snapshot's last
 * slice (its builder told the header announced one fewer), while storage installs every
 * staged row: memory and storage disagree until the replica restarts.
 */
export function adoptPartialSeed(host: ReplicaHost, msg: FinishSeed, run: (msg: FinishSeed) => FinishSeedReply): FinishSeedReply {
  if (host.storage.firstMissingSeedChunk(msg.snapshotId, msg.chunks) !== null) return run(msg);
  const rows = host.storage.readStagedSeed(msg.snapshotId, msg.chunks);
  const [header, ...rest] = rows;
  const last = rest[rest.length - 1];
  const before = rows[rows.length - 2];
  // Only a header and a last slice of one row each: "." ends a piece, so both rows are whole pieces.
  if (!header?.startsWith(".") || !last?.startsWith(".") || !before?.startsWith(".")) return run(msg);
  const parsed = JSON.parse(header.slice(1)) as { slices: number };
  const builder = new CheckpointBuilder(msg.spec);
  builder.push(`.${JSON.stringify({ ...parsed, slices: parsed.slices - 1 })}`);
  for (const row of rest.slice(0, -1)) builder.push(row);
  host.seeding = { snapshotId: msg.snapshotId, next: msg.chunks, builder };
  return run(msg);
}

/**
 * resume-skips-chunk: a seed resumed by the monitor (issue 12: it asks the fresh replica
 * how many chunks it holds) skips the first chunk the replica lacks. The replica counts
 * one chunk more than it holds, having staged a copy of the chunk before in that slot, so
 * no completeness check notices: the installed state lacks the skipped slice's keys.
 */
export function progressPastHeld(host: ReplicaHost, msg: { snapshot: string; chunks: number }, run: (msg: { snapshot: string; chunks: number }) => SeedProgressReply): SeedProgressReply {
  const reply = run(msg);
  // Past the header and at least one slice, with a chunk left to skip.
  if (reply.status !== "ok" || reply.chunks < 2 || reply.chunks >= msg.chunks) return reply;
  const previous = host.storage.readStagedSeed(msg.snapshot, reply.chunks)[reply.chunks - 1];
  if (previous === undefined) return reply;
  host.storage.stageSeedChunk(msg.snapshot, reply.chunks, previous);
  return { ...reply, chunks: reply.chunks + 1 };
}
