/**
 * Only the subscribe route upgrades to a WebSocket. The runtime hands the Worker any request
 * with `Upgrade: websocket` as a GET without its body (measured in local workerd: a POST to the
 * ingest route arrived as `GET`, so it got "no route for GET ..."), so elsewhere it is refused
 * as what it is, with the usual JSON envelope, before routing could misread it.
 */
import type { Context } from "hono";
import { FluxError } from "../shared/errors.ts";

const SUBSCRIBE = /^\/v1\/dataflows\/[^/]+\/subscribe$/;

/** Refuses a WebSocket upgrade on every path but `/v1/dataflows/{id}/subscribe` (throws `400 INVALID_REQUEST`). */
export function refuseStrayUpgrade(c: Context): void {
  if (c.req.header("upgrade")?.toLowerCase() === "websocket" && !SUBSCRIBE.test(c.req.path)) {
    throw new FluxError("INVALID_REQUEST", `only GET /v1/dataflows/{id}/subscribe accepts a WebSocket upgrade (Upgrade: websocket), not ${c.req.path}; send this request without an Upgrade header (the runtime delivers an upgrade as a GET without its body)`);
  }
}
