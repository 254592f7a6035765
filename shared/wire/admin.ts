/** Admin (chaos) request shapes: injected replica faults for tests and demos (issue 3). */
import { z } from "zod";

/** `crash`: down until healed; `hang`: calls never answer; `slow`: calls take 2 s; `wipe`: storage lost; `heal`: back to normal. */
export const FaultRequestSchema = z.strictObject({
  kind: z.enum(["crash", "hang", "slow", "wipe", "heal"]),
});
export type FaultKind = z.infer<typeof FaultRequestSchema>["kind"];

/** How long each call to a `slow` replica is delayed, ms. */
export const SLOW_FAULT_DELAY_MS = 2000;
