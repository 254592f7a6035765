/**
 * Stages under faults in workerd (issue 27): a crash of the upstream primary and then of
 * a stage primary while a retrying client posts: the stage's closed results, and a
 * subscription to them resumed across the fail-over, equal the reference. A stage with
 * both replicas of a partition down: the upstream takes batches up to the outbox bound
 * (FLUX_OUTBOX_BOUND, 8 in this project), then answers 503 BACKPRESSURE naming the edge,
 * and catches up by itself once the stage returns.
 */
import { describe, expect, it } from "vitest";
import { call, postEvents, results, subscribe, uniqueName } from "../helpers/api.ts";
import { fault, routing, tick, tickUntilHealthy } from "../helpers/fault-client.ts";
import { waitFor } from "../helpers/wait.ts";

const PAGES = ["a", "b", "c", "d", "e", "f"];
const T0 = 1_700_000_000_000;

/** Second `second` of clicks: one per page, 10 bytes more per page. */
const clicks = (second: number) => PAGES.map((page, i) => ({ page, ts: T0 + second * 1_000 + i, bytes: 10 * (i + 1) }));

/** Resends until acknowledged, firing the monitor between attempts; only retryable 503s on the way. @returns the codes of the refusals. */
async function postUntilAcked(stream: string, seq: number, events: unknown[]): Promise<string[]> {
  const codes: string[] = [];
  for (let attempt = 0; attempt < 60; attempt++) {
    const res = await postEvents(stream, "client", seq, events);
    if (res.status === 200) return codes;
    const body = await res.text();
    expect(res.status, body).toBe(503);
    codes.push((JSON.parse(body) as { error: { code: string } }).error.code);
    await tick();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`batch ${seq} not acknowledged after 60 attempts: ${codes.join(", ")}`);
}

/** A first stage of 1 s windows per page, and a stage of 2 s windows per page over it, on 2 and 3 partitions. */
async function pipeline(): Promise<{ stream: string; up: string; down: string }> {
  const stream = uniqueName("clicks");
  const up = uniqueName("pages");
  const down = uniqueName("pages2s");
  const upSpec = { stream, key: "page", timeField: "ts", window: { kind: "tumbling", sizeMs: 1_000 }, aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } }, partitions: 2 };
  const downSpec = { from: up, key: "key", window: { kind: "tumbling", sizeMs: 2_000 }, aggregates: { clicks: { op: "sum", field: "values.n" }, bytes: { op: "sum", field: "values.bytes" } }, partitions: 3 };
  expect((await call("PUT", `/v1/dataflows/${up}`, upSpec)).status).toBe(201);
  expect((await call("PUT", `/v1/dataflows/${down}`, downSpec)).status).toBe(201);
  return { stream, up, down };
}

/** The stage's closed windows once every second of 0..`seconds` was posted: per page, 2 clicks and 2 × its bytes per 2 s. */
function expected(seconds: number): string[] {
  const starts = Array.from({ length: Math.floor(seconds / 2) }, (_, i) => i * 2_000);
  return starts.flatMap((start) => PAGES.map((page, i) => `${page}@${start}: clicks 2, bytes ${2 * 10 * (i + 1)}`)).sort();
}

const label = (r: { key: string; windowStartMs: number; values: Record<string, unknown> }) => `${r.key}@${r.windowStartMs - T0}: clicks ${String(r.values.clicks)}, bytes ${String(r.values.bytes)}`;

describe("stages under faults", () => {
  it("a crash of the upstream primary, then of a stage primary, under load: the stage's results and its subscription are exact", { timeout: 90_000 }, async () => {
    const { stream, up, down } = await pipeline();
    const upVictim = (await routing(up))[0]?.primary ?? "";
    const downVictim = (await routing(down))[1]?.primary ?? "";
    const before = await subscribe(down, 100);
    for (let second = 0; second <= 12; second++) {
      if (second === 3) expect((await fault(upVictim, "crash")).status).toBe(200);
      if (second === 7) expect((await fault(downVictim, "crash")).status).toBe(200);
      await postUntilAcked(stream, second + 1, clicks(second));
    }
    await tickUntilHealthy(up);
    await tickUntilHealthy(down);
    expect((await routing(up))[0]?.primary).not.toBe(upVictim);
    expect((await routing(down))[1]?.primary).not.toBe(downVictim);
    // Seconds 0..12 posted: the upstream's watermark is second 12, so the stage's windows up to 12 s are closed.
    const want = expected(12);
    const closed = await waitFor(async () => {
      const got = (await results(down)).filter((r) => r.closed).map(label).sort();
      return got.length >= want.length ? got : null;
    }, 30_000, "the stage's windows up to 12 s closed");
    expect(closed).toEqual(want);
    // A subscriber resuming from its cursor across both fail-overs sees each closed window once.
    const after = await subscribe(down, 300, before.at(-1)?.id);
    const seen = [...before, ...after].map((e) => `${e.data.key}@${e.data.windowStartMs - T0}: clicks ${String(e.data.values.clicks)}, bytes ${String(e.data.values.bytes)}`);
    expect(seen.sort()).toEqual(want);
  });

  it("a stage partition with both replicas down: BACKPRESSURE naming the edge past the bound, then catching up by itself", { timeout: 90_000 }, async () => {
    const { stream, up, down } = await pipeline();
    const route = (await routing(down))[0];
    const pair = [route?.primary ?? "", route?.standby ?? ""];
    for (const name of pair) expect((await fault(name, "crash")).status).toBe(200);
    let refusal: { code: string; message: string } | null = null;
    let seq = 1;
    for (; seq <= 40 && refusal === null; seq++) {
      const res = await postEvents(stream, "client", seq, clicks(seq - 1));
      if (res.status === 503) refusal = ((await res.json()) as { error: { code: string; message: string } }).error;
      else expect(res.status).toBe(200);
    }
    expect(refusal?.code).toBe("BACKPRESSURE");
    expect(refusal?.message).toMatch(new RegExp(`edge ${up}/p\\d → ${down}/p0 is \\d+ outputs behind \\(bound 8\\): downstream partition unavailable`));
    const refusedSeq = seq - 1;
    for (const name of pair) expect((await fault(name, "heal")).status).toBe(200);
    await tickUntilHealthy(down);
    // Nothing new posted: the upstream delivers what the stage lacks on its own, then takes the refused batch.
    await waitFor(async () => ((await postEvents(stream, "client", refusedSeq, clicks(refusedSeq - 1))).status === 200 ? true : null), 30_000, "the refused batch taken");
    const status = (await (await call("GET", "/v1/status")).json()) as { dataflows: { id: string; edges: { lag: number }[] }[] };
    expect(status.dataflows.find((d) => d.id === down)?.edges.length).toBe(6);
    const want = expected(refusedSeq - 1);
    const closed = await waitFor(async () => {
      const got = (await results(down)).filter((r) => r.closed).map(label).sort();
      return got.length >= want.length ? got : null;
    }, 30_000, "the stage caught up");
    expect(closed).toEqual(want);
  });
});
