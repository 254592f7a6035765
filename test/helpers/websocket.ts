/** The WebSocket subscription in workerd tests: its messages, checked strictly, and opening one. */
import { expect } from "vitest";
import { z } from "zod";
import { SubscriptionEventSchema } from "../../shared/wire/subscription.ts";
import { call } from "./api.ts";

/** One message, with no field beyond those documented. */
export const MessageSchema = z.discriminatedUnion("type", [
  z.strictObject({ ...SubscriptionEventSchema.shape, type: z.literal("window"), cursor: z.string() }),
  z.strictObject({ type: z.literal("end"), cursor: z.string() }),
]);
export type Message = z.infer<typeof MessageSchema>;

/** Opens the subscription as a WebSocket; the upgrade must succeed. */
export async function openSubscription(id: string, query: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  const res = await call("GET", `/v1/dataflows/${id}/subscribe${query}`, undefined, { upgrade: "websocket", ...headers });
  expect(res.status, res.status === 101 ? "" : await res.text()).toBe(101);
  const ws = res.webSocket;
  if (!ws) throw new Error("a 101 response without a WebSocket");
  ws.accept();
  return ws;
}
