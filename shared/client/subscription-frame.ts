/** What a subscription transport yields: a window with the cursor after it, or the end of one connection. */
import type { SubscriptionEvent } from "../wire/subscription.ts";

/** A closed window and the subscriber's cursor right after it. */
export type SubscribedWindow = SubscriptionEvent & { cursor: string };

/** One item of a connection's stream. */
export type Frame = { type: "window"; cursor: string; window: SubscribedWindow } | { type: "end"; cursor: string };

/** The subscribe path of a dataflow. */
export function subscribePath(dataflow: string): string {
  return `/v1/dataflows/${encodeURIComponent(dataflow)}/subscribe`;
}

/** JSON.parse that answers undefined for text that is not JSON (then the schema check reports it). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
