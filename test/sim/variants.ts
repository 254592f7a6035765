/**
 * Deliberately broken variants of the protocol, to prove the simulator has teeth
 * (issue 4). Each is injected by the simulator around the real code (rewriting what a
 * replica receives, what it stores or what the monitor saves), so no switch for them
 * exists anywhere in product code or configuration.
 */
export const VARIANTS = {
  "no-dedup": "replicas never recognise a resent (producer, seq)",
  "no-fencing": "replicas accept calls from any epoch and whatever role they hold",
  "unstable-outputs": "the primary treats entries as stable before the standby holds them",
  "out-of-order-standby": "the standby applies entries past a gap instead of waiting for it to be filled",
  "promotion-without-fencing": "the monitor promotes the standby without a new epoch",
  "early-log-trim": "replicas trim their log before the standby acknowledged and before a checkpoint",
  "early-group-ack": "the primary counts a whole forwarded group as held when the standby received only part of it",
  "early-duplicate-answer": "the primary answers a resent batch whose entry is still pending at once, before it is stable",
} as const;

export type Variant = keyof typeof VARIANTS;

export function isVariant(name: string): name is Variant {
  return Object.hasOwn(VARIANTS, name);
}
