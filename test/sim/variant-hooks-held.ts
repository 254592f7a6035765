/**
 * Broken variants of a standby's held entries (issue 12): a standby logs what it is forwarded
 * at once but applies it in batches, so every path that ends its standby role must apply
 * what it holds first.
 */
import type { InitReplica, Refusal, ReplicaStatus } from "../../shared/wire/replica-rpc.ts";
import type { Wrap } from "./variant-hooks.ts";

/** promotion-drops-held: a standby reconfigured (promoted, above all) forgets the entries it holds but has not applied. */
export const dropHeldOnConfigure: Wrap<InitReplica, { status: "ok" } | Refusal> = (host, msg, run) => {
  const state = host.load();
  if (state?.meta.role === "standby" && msg.role !== "standby") state.pending = [];
  return run(msg);
};

/** probe-drops-held: a probed standby forgets the entries it holds instead of applying them. */
export const dropHeldOnProbe: Wrap<null, ReplicaStatus | null> = (host, msg, run) => {
  const state = host.load();
  if (state?.meta.role === "standby") state.pending = [];
  return run(msg);
};
