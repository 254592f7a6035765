/**
 * The live result feed behind `GET /v1/dataflows/{id}/subscribe`, independent of the
 * transport (SSE or WebSocket). Each partition is read from its current primary strictly
 * in output order and the cursor only ever moves to the next output sequence number, so
 * a subscriber that resumes from the last cursor it received sees no gap and no repeat,
 * across fail-overs too (issue 6). A feed opened with a signed token stops within one poll
 * of its router seeing the token revoked (issue 26).
 */
import { replicaStub, withDeadline } from "../platform/object-calls.ts";
import type { PartitionRoute } from "../shared/wire/routing.ts";
import { formatCursor, type SubscriptionEvent } from "../shared/wire/subscription.ts";
import { lookupDataflow } from "../platform/control-plane.ts";

/** How often partitions are polled when nothing new arrived, ms. */
const POLL_MS = 250;
/** Outputs read from one partition per call. */
const PAGE = 200;

/** Where the feed starts and how long it runs. */
export interface FeedStart {
  dataflow: string;
  /** The routing the request was validated against; refreshed from the dataflow's monitor after failures. */
  routes: readonly PartitionRoute[];
  /** The last output sequence number already seen, per partition (parsed `cursor`). */
  cursor: readonly number[];
  /** Deadline of every replica call, ms. */
  replicaTimeoutMs: number;
  /** When the feed stops by itself, epoch ms. */
  endAt: number;
  /** Whether the token the feed was opened with has been revoked since; asked before every poll (absent: never). */
  isRevoked?: () => Promise<boolean>;
  /** Tells the dataflow's monitor that a call to `replica` failed (issue 29: it probes at once). */
  report?: (replica: string) => void;
}

/** How a feed ended: its cursor as text, and whether because its token was revoked (else time, or the client left). */
export interface FeedEnd {
  cursorText: string;
  revoked: boolean;
}

/** The transport the feed writes to. */
export interface FeedSink {
  /**
   * Delivers one closed window; `cursorText` is the cursor that resumes right after it.
   * Must not throw for a client that went away: report that through `isAborted` instead.
   */
  send(event: SubscriptionEvent, cursorText: string): Promise<void>;
  /** True once the client is gone; the feed then stops polling. */
  isAborted(): boolean;
  /** Waits between polls that found nothing new. */
  sleep(ms: number): Promise<unknown>;
}

/**
 * Polls every partition and sends each new output in order until `start.endAt`, until the
 * client is gone or until its token is revoked. Replica failures are not errors: the feed
 * refreshes routing and retries.
 * @returns the cursor after the last event sent, as text (the initial cursor if none was).
 */
export async function runResultFeed(env: Env, start: FeedStart, sink: FeedSink): Promise<FeedEnd> {
  const cursor = [...start.cursor];
  let routes = start.routes;
  while (!sink.isAborted() && Date.now() < start.endAt) {
    if (await start.isRevoked?.()) return { cursorText: formatCursor(cursor), revoked: true };
    let progressed = false;
    let refresh = false;
    for (const route of routes) {
      const outputs = await readNext(env, route, cursor[route.partition] ?? 0, start.replicaTimeoutMs, start.report);
      if (outputs === null) {
        refresh = true; // this partition is failing over or down; try again after the pause
        continue;
      }
      for (const { outputSeq, result } of outputs) {
        // Strictly the next one: never skip ahead of what this subscriber has seen.
        if (outputSeq !== (cursor[route.partition] ?? 0) + 1) break;
        cursor[route.partition] = outputSeq;
        const event: SubscriptionEvent = { partition: route.partition, outputSeq, key: result.key, windowStartMs: result.windowStartMs, windowEndMs: result.windowEndMs, values: result.values };
        await sink.send(event, formatCursor(cursor));
        progressed = true;
      }
    }
    if (refresh) routes = (await lookupDataflow(env, start.dataflow, start.replicaTimeoutMs).catch(() => null))?.routes ?? routes;
    if (!progressed) await sink.sleep(POLL_MS);
  }
  return { cursorText: formatCursor(cursor), revoked: false };
}

/** One page of a partition's outputs after `afterSeq` from its primary, or null if the primary could not serve it (a failed call is reported). */
async function readNext(env: Env, route: PartitionRoute, afterSeq: number, timeoutMs: number, report?: (replica: string) => void) {
  try {
    const stub = replicaStub(env, route.primary);
    const page = await withDeadline(async () => stub.readOutputPage(route.epoch, afterSeq, PAGE), timeoutMs, `replica ${route.primary}`);
    return page.status === "ok" ? page.outputs : null;
  } catch {
    report?.(route.primary);
    return null;
  }
}
