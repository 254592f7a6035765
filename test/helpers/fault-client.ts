/**
 * A retrying client and monitor controls for in-workerd fault tests: posts resend the
 * same seq until acknowledged, firing the monitor's alarm between attempts (tests never
 * sleep for alarms), and the reference model gives the exact expected results.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { expect } from "vitest";
import { COORDINATOR_NAME, monitorName } from "../../shared/names.ts";
import { windowAggregate } from "../../shared/operators/window-aggregate.ts";
import { DataflowSpecSchema } from "../../shared/dataflow-checks/dataflow-spec-schema.ts";
import type { FluxRecord } from "../../shared/wire/window-result.ts";
import { call, clicksSpec, createDataflow, postEvents } from "./api.ts";

const ADMIN_TOKEN = "test-admin-token";

export type Event = { page: string; ts: number; bytes: number };

/** The monitor object of dataflow `id` (issue 29). */
export function monitorOf(id: string) {
  return env.DATAFLOW_MONITOR.getByName(monitorName(id));
}

/**
 * Runs every dataflow's monitor tick now, in turn, or only that of dataflow `only` (each
 * monitor's alarm is armed once its dataflow exists; a test runs it whenever it is armed for).
 */
export async function tick(only?: string): Promise<void> {
  const ids = only === undefined ? (await env.COORDINATOR.getByName(COORDINATOR_NAME).listDataflows()).map((e) => e.id) : [only];
  for (const id of ids) {
    const monitor = monitorOf(id);
    // A tick re-arms first; if none is armed, a report ticks now.
    if (!(await runDurableObjectAlarm(monitor))) await monitor.reportFailure();
  }
}

/** Injects a fault through the admin endpoint (`token` null: no Authorization header at all). */
export async function fault(name: string, kind: string, token: string | null = ADMIN_TOKEN): Promise<Response> {
  return call("POST", `/v1/admin/replicas/${encodeURIComponent(name)}/fault`, { kind }, { authorization: token === null ? null : `Bearer ${token}` });
}

/** The routing of one dataflow, as the API shows it. */
export async function routing(id: string): Promise<{ partition: number; epoch: number; primary: string; standby: string | null; status: string }[]> {
  const body = (await (await call("GET", `/v1/dataflows/${id}`)).json()) as { dataflow: { partitions: Awaited<ReturnType<typeof routing>> } };
  return body.dataflow.partitions;
}

/** Posts until acknowledged; only retryable 503s are allowed along the way. @returns the statuses seen. */
export async function postUntilAcked(stream: string, producer: string, seq: number, events: readonly object[], onlyPartition?: number, maxAttempts = 25): Promise<number[]> {
  const seen: number[] = [];
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const res = await postEvents(stream, producer, seq, events);
    seen.push(res.status);
    if (res.status === 200) return seen;
    const body = await res.text();
    expect(res.status, `batch ${seq}: ${body}`).toBe(503);
    expect(res.headers.get("retry-after")).not.toBeNull();
    const error = (JSON.parse(body) as { error: { code: string; details?: { partition?: number } } }).error;
    expect(error.code).toBe("UNAVAILABLE");
    if (onlyPartition !== undefined && error.details?.partition !== undefined) expect(error.details.partition, body).toBe(onlyPartition);
    await tick();
  }
  throw new Error(`batch ${seq} not acknowledged after ${maxAttempts} attempts: ${seen.join(",")}`);
}

/** Ticks until every partition of the dataflow is healthy. */
export async function tickUntilHealthy(id: string, maxTicks = 30): Promise<void> {
  for (let i = 0; i < maxTicks; i++) {
    if ((await routing(id)).every((p) => p.status === "healthy")) return;
    await tick();
  }
  expect((await routing(id)).map((p) => p.status)).toEqual((await routing(id)).map(() => "healthy"));
}

/**
 * Ticks until the healed replica `name` was told to retire: replaced replicas that kept
 * missing are probed ever more rarely, at most 64 s apart (retired-probes.ts).
 */
export async function tickUntilRetired(name: string, withinMs = 70_000): Promise<void> {
  const replica = env.PARTITION_REPLICA.getByName(name);
  const deadline = Date.now() + withinMs;
  while ((await replica.status())?.role !== "retired" && Date.now() < deadline) {
    await tick();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(await replica.status()).toMatchObject({ role: "retired" });
}

/** Every result of a dataflow, page by page. */
async function allResults(id: string): Promise<{ key: string; windowStartMs: number; values: Record<string, number | null> }[]> {
  const all: { key: string; windowStartMs: number; values: Record<string, number | null> }[] = [];
  for (let after: string | null = ""; after !== null; ) {
    const res = await call("GET", `/v1/dataflows/${id}/results?limit=10000${after ? `&after=${encodeURIComponent(after)}` : ""}`);
    const page = (await res.json()) as { results: typeof all; next: string | null };
    all.push(...page.results);
    after = page.next ?? null;
  }
  return all;
}

/** Asserts served results (every page of them) equal one application of each acknowledged batch. */
export async function expectExact(id: string, stream: string, batches: readonly Event[][]): Promise<void> {
  const op = windowAggregate(DataflowSpecSchema.parse(clicksSpec(stream, faultSpec)));
  let state = op.init();
  for (const events of batches) state = op.process(state, events.map((e): FluxRecord => [e.page, e.ts, e.bytes]), () => {});
  const expected = op.openResults(state, {}).map(({ key, windowStartMs, values }) => ({ key, windowStartMs, values }));
  const actual = (await allResults(id)).map(({ key, windowStartMs, values }) => ({ key, windowStartMs, values }));
  expect(actual).toEqual(expected);
}

/** Spec overrides for fault tests: 2 partitions, windows that never close. */
export const faultSpec = { partitions: 2, window: { kind: "tumbling", sizeMs: 10_000, allowedLatenessMs: 100_000_000 } };

/** The pages of {@link subscribedDataflow}: one window each per second and partition. */
export const SUBSCRIBED_PAGES = ["a", "b", "c", "d"];

/** A two-partition dataflow of 1 s windows with seconds 0..2 posted, and a function that posts more. */
export async function subscribedDataflow(): Promise<{ id: string; post: (second: number) => Promise<unknown> }> {
  const { id, stream } = await createDataflow({ partitions: 2, window: { kind: "tumbling", sizeMs: 1_000 } });
  const post = (second: number) => postUntilAcked(stream, "p", second + 1, SUBSCRIBED_PAGES.map((page) => ({ page, ts: second * 1_000 + 5, bytes: 1 })));
  for (let second = 0; second < 3; second++) await post(second);
  return { id, post };
}

/** Crashes partition 0's primary, posts seconds 3..5 and waits for the fail-over to finish. */
export async function failOverWhilePosting(id: string, post: (second: number) => Promise<unknown>): Promise<void> {
  const oldPrimary = (await routing(id))[0]?.primary ?? "";
  expect((await fault(oldPrimary, "crash")).status).toBe(200);
  for (let second = 3; second < 6; second++) await post(second);
  await tick();
  await tickUntilHealthy(id);
  expect((await routing(id))[0]?.primary).not.toBe(oldPrimary);
}

/** Names one output of a subscription, to compare what two subscribers saw. */
export const outputLabel = (e: { partition: number; outputSeq: number; key: string; windowStartMs: number }) => `${e.partition}:${e.outputSeq}:${e.key}@${e.windowStartMs}`;
