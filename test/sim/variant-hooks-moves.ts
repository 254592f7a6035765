/**
 * Broken variants of key-group moves (issue 28): the monitor switching routing before the
 * target holds the groups' state, a target answering an adopt before its standby holds it
 * (so the source forgets its copy too early), and an adopt that leaves the groups' dedup
 * memory behind.
 */
import { keyGroupMapOf, ownerOf } from "../../shared/keygroups/key-groups.ts";
import type { MoveStepReply, MoveStepRequest } from "../../shared/moves/move-step.ts";
import type { DataflowRecord } from "../../shared/wire/routing.ts";
import type { Wrap } from "./variant-hooks.ts";

/** switch-before-adopt: once a release is answered, routing sends the groups to the target (both epochs rise), before the adopt is sent. */
export function switchAtRelease(record: DataflowRecord): void {
  for (const move of record.moves) {
    const map = keyGroupMapOf(record);
    if (move.phase !== "adopt" || move.groups.every((g) => ownerOf(map, g) === move.to)) continue;
    const owners = Array.from({ length: map.groups }, (_, g) => ownerOf(map, g));
    for (const g of move.groups) owners[g] = move.to;
    record.keyGroups = { groups: map.groups, owners };
    for (const partition of [move.from, move.to]) {
      const route = record.routes[partition];
      if (!route) continue;
      route.epoch += 1;
      route.version += 1;
    }
  }
}

/** adopt-answered-early: the target primary answers an adopt once it has logged it, not once its standby holds it too. */
export const adoptAnsweredEarly: Wrap<MoveStepRequest, Promise<MoveStepReply>> = (_host, msg, run) => {
  if (msg.step.kind !== "adopt") return run(msg);
  const logged = run(msg);
  logged.catch(() => undefined);
  return Promise.resolve({ status: "ok", released: null });
};

/** adopt-without-judges: an adopt carries the groups' state but not the dedup memory that judged them. */
export const adoptWithoutJudges: Wrap<MoveStepRequest, Promise<MoveStepReply>> = (_host, msg, run) =>
  run(msg.step.kind === "adopt" ? { ...msg, step: { ...msg.step, judges: [] } } : msg);
