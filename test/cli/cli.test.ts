/**
 * The CLI against a local stack (`wrangler dev` offline, test/helpers/local-stack.ts):
 * every command, `--json`, exit codes, and `flux post` interrupted (Ctrl-C, then a kill)
 * and resumed, with exact totals and exact results.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFlux, startLocalStack, STACK_ADMIN_TOKEN, STACK_TOKEN, type LocalStack } from "../helpers/local-stack.ts";

let stack: LocalStack;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  stack = await startLocalStack();
  dir = mkdtempSync(join(tmpdir(), "flux-cli-"));
  env = { FLUX_URL: stack.url, FLUX_TOKEN: STACK_TOKEN, FLUX_ADMIN_TOKEN: STACK_ADMIN_TOKEN };
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const flux = (...args: string[]) => startFlux(args, dir, env).done;
const json = (text: string): unknown => JSON.parse(text);

const SPEC = `
streams:
  clicks:
    fields:
      page: { type: string }
      ts: { type: time }
      bytes: { type: integer }
dataflows:
  by-page:
    stream: clicks
    key: page
    timeField: ts
    window: { kind: tumbling, sizeMs: 1000 }
    aggregates:
      n: { op: count }
      bytes: { op: sum, field: bytes }
    partitions: 2
`;

/** 300 events over 5 pages and 30 one-second windows. */
const EVENTS = Array.from({ length: 300 }, (_, i) => ({ page: `p${i % 5}`, ts: 1_700_000_000_000 + i * 100, bytes: i }));

/** Acknowledged batches and events in the saved state of `flux post`. */
function statePosted(path: string): { batches: number; events: number } {
  if (!existsSync(path)) return { batches: 0, events: 0 };
  try {
    return (json(readFileSync(path, "utf8")) as { producer: { totals: { batches: number; events: number } } }).producer.totals;
  } catch {
    return { batches: 0, events: 0 }; // being replaced right now
  }
}

/** Starts `flux post` and stops it with `signal` once it has `batches` more batches acknowledged. */
async function interruptPost(signal: NodeJS.Signals, batches: number) {
  const state = join(dir, ".flux", "post-clicks-events.ndjson.json");
  const start = statePosted(state).batches;
  const run = startFlux(["post", "events.ndjson", "--stream", "clicks", "--batch-events", "10", "--linger", "5"], dir, env);
  const deadline = Date.now() + 60_000;
  while (statePosted(state).batches < start + batches && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  run.child.kill(signal);
  return { result: await run.done, before: start, after: statePosted(state) };
}

describe("flux CLI on a local stack", () => {
  it("apply creates streams and dataflows from YAML, then answers unchanged", async () => {
    writeFileSync(join(dir, "spec.yaml"), SPEC);
    const first = await flux("apply", "-f", "spec.yaml");
    expect(first.stdout, first.stderr).toBe("stream clicks: created\ndataflow by-page: created\n");
    expect(first.code).toBe(0);
    const again = await flux("apply", "-f", "spec.yaml", "--json");
    expect(json(again.stdout)).toEqual({ applied: [{ kind: "stream", name: "clicks", status: "unchanged" }, { kind: "dataflow", name: "by-page", status: "unchanged" }] });
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ dataflows: { x: { stream: "clicks" } } }));
    const bad = await flux("apply", "-f", "bad.json");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bad.json: dataflows.x.key: must be a string or an array (missing)");
  });

  it("ls, get and get stream show what was applied", async () => {
    const ls = await flux("ls");
    expect(ls.stdout).toMatch(/^DATAFLOW\s+STREAM\s+PARTITIONS\s+REPLICATION\s+READY\s+HEALTH\nby-page\s+clicks\s+2\s+2\s+true\s+2 healthy\n$/);
    const streams = await flux("ls", "streams", "--json");
    expect((json(streams.stdout) as { streams: { name: string }[] }).streams.map((s) => s.name)).toEqual(["clicks"]);
    const get = await flux("get", "by-page", "--json");
    expect(json(get.stdout)).toMatchObject({ dataflow: { id: "by-page", spec: { stream: "clicks", partitions: 2 } } });
    const stream = await flux("get", "stream", "clicks", "--json");
    expect(json(stream.stdout)).toMatchObject({ stream: { name: "clicks", schema: { fields: { page: { type: "string" } } } } });
  });

  it("post, interrupted by Ctrl-C and then killed, resumes from its saved seq with exact totals and results", async () => {
    writeFileSync(join(dir, "events.ndjson"), EVENTS.map((e) => JSON.stringify(e)).join("\n") + "\n");
    const sigint = await interruptPost("SIGINT", 3);
    expect(sigint.result.code, sigint.result.stderr).toBe(130);
    expect(sigint.result.stderr).toContain("run the same command again to resume");
    const killed = await interruptPost("SIGKILL", 3);
    expect(killed.result.signal).toBe("SIGKILL");
    expect(killed.before).toBeGreaterThanOrEqual(3);

    const last = await flux("post", "events.ndjson", "--stream", "clicks", "--batch-events", "10", "--json");
    expect(last.code, last.stderr).toBe(0);
    const answer = json(last.stdout) as { totals: { events: number; rejectedEvents: number; batches: number }; thisRun: { events: number }; fileEvents: number };
    expect(answer.fileEvents).toBe(300);
    expect(answer.totals.events).toBe(300);
    expect(answer.totals.rejectedEvents).toBe(0);
    // The last run posted exactly what the interrupted ones had not got acknowledged.
    expect(killed.after.events).toBeGreaterThan(0);
    expect(answer.thisRun.events).toBe(300 - killed.after.events);

    const res = await fetch(`${stack.url}/v1/dataflows/by-page/results?limit=10000`, { headers: { authorization: `Bearer ${STACK_TOKEN}` } });
    const results = ((await res.json()) as { results: { key: string; windowStartMs: number; values: { n: number; bytes: number } }[] }).results;
    const expected = new Map<string, { n: number; bytes: number }>();
    for (const e of EVENTS) {
      const at = `${e.page}@${Math.floor(e.ts / 1000) * 1000}`;
      const sum = expected.get(at) ?? { n: 0, bytes: 0 };
      expected.set(at, { n: sum.n + 1, bytes: sum.bytes + e.bytes });
    }
    expect(new Map(results.map((r) => [`${r.key}@${r.windowStartMs}`, r.values]))).toEqual(expected);

    const again = await flux("post", "events.ndjson", "--stream", "clicks");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing left to post");

    // A file that changed since its saved state is a usage error (2), saying how to go on.
    writeFileSync(join(dir, "events.ndjson"), EVENTS.map((e) => JSON.stringify(e)).join("\n") + '\n{"page":"p9","ts":1,"bytes":1}\n');
    const changed = await flux("post", "events.ndjson", "--stream", "clicks");
    expect(changed.code, changed.stderr).toBe(2);
    expect(changed.stderr).toContain("--restart");
    writeFileSync(join(dir, "events.ndjson"), EVENTS.map((e) => JSON.stringify(e)).join("\n") + "\n");
  }, 180_000);

  it("tail prints closed windows and continues after the saved cursor", async () => {
    const first = await flux("tail", "by-page", "--max", "3", "--json");
    expect(first.code, first.stderr).toBe(0);
    const windows = first.stdout.trim().split("\n").map((l) => json(l) as { partition: number; outputSeq: number; cursor: string });
    expect(windows).toHaveLength(3);
    expect(readFileSync(join(dir, ".flux", "tail-by-page.cursor"), "utf8")).toBe(windows[2]?.cursor);
    const next = await flux("tail", "by-page", "--max", "2", "--json", "--ws");
    const more = next.stdout.trim().split("\n").map((l) => json(l) as { partition: number; outputSeq: number });
    const seen = [...windows, ...more].map((w) => `${w.partition}:${w.outputSeq}`);
    expect(new Set(seen).size).toBe(5);
    const human = await flux("tail", "by-page", "--max", "1", "--from-start");
    expect(human.stdout).toMatch(/^\d\d:\d\d:\d\d–\d\d:\d\d:\d\d {2}p\d {2}n=\d+ bytes=\d+ {2}\(p\d #1\)\n$/);
  });

  it("fault crashes a primary and status shows the takeover", async () => {
    const before = json((await flux("status", "--json")).stdout) as { dataflows: { partitions: { replicas: { name: string; role: string | null }[] }[] }[] };
    const primary = before.dataflows[0]?.partitions[0]?.replicas.find((r) => r.role === "primary")?.name ?? "";
    const crashed = await flux("fault", primary, "crash");
    expect(crashed.stdout).toBe(`${primary}: crash injected\n`);
    // A write that fails makes the monitor probe at once, even when the dataflow was idle;
    // flux post resends until the standby has taken over.
    writeFileSync(join(dir, "after-crash.ndjson"), EVENTS.slice(0, 20).map((e) => JSON.stringify({ ...e, ts: e.ts + 60_000 })).join("\n"));
    const posted = await flux("post", "after-crash.ndjson", "--stream", "clicks", "--json");
    expect(posted.code, posted.stderr).toBe(0);
    let status = "";
    const deadline = Date.now() + 30_000;
    while (!status.includes("takeover") && Date.now() < deadline) status = (await flux("status")).stdout;
    expect(status).toMatch(/PART\s+STATUS\s+EPOCH\s+PRIMARY\s+STANDBY\s+LAG/);
    expect(status).toContain(`takeover  primary ${primary} failed`);
    expect((await flux("fault", primary, "heal")).code).toBe(0);
  }, 60_000);

  it("apply creates a stage over by-page; ls, status and rm show it as a stage, and by-page cannot go first", async () => {
    const stage = { dataflows: { "pages-total": { from: "by-page", key: "windowStartMs", window: { kind: "tumbling", sizeMs: 1000 }, aggregates: { views: { op: "sum", field: "values.n" } }, partitions: 1 } } };
    writeFileSync(join(dir, "stage.json"), JSON.stringify(stage));
    const applied = await flux("apply", "-f", "stage.json");
    expect(applied.stdout, applied.stderr).toBe("dataflow pages-total: created\n");
    expect((await flux("ls")).stdout).toMatch(/\npages-total\s+from by-page\s+1\s+2\s+true\s+1 healthy\n/);
    let status = "";
    const deadline = Date.now() + 30_000;
    // by-page's 2 partitions deliver to the stage's 1: one edge each, caught up once it holds every result.
    while (!/by-page\/p1\s+p0\s+(\d+)\s+\d+\s+\1\s+0/.test(status) && Date.now() < deadline) status = (await flux("status")).stdout;
    expect(status).toContain("dataflow pages-total (from by-page)");
    expect(status).toMatch(/FROM\s+TO\s+PRODUCED\s+DELIVERED\s+ACKED\s+LAG\nby-page\/p0\s+p0\s+\d+/);
    const refused = await flux("rm", "by-page", "--json");
    expect(refused.code).toBe(3);
    expect(json(refused.stderr)).toMatchObject({ error: { code: "DATAFLOW_IN_USE", status: 409, details: { readers: ["pages-total"] } } });
    expect((await flux("rm", "pages-total")).code).toBe(0);
  }, 60_000);

  it("rm deletes a dataflow; exit codes tell not found, auth, usage and unavailable apart", async () => {
    writeFileSync(join(dir, "other.json"), JSON.stringify({ dataflows: { other: { stream: "clicks", key: "page", window: { kind: "tumbling", sizeMs: 1000 }, aggregates: { n: { op: "count" } }, partitions: 1 } } }));
    expect((await flux("apply", "-f", "other.json")).code).toBe(0);
    const rm = await flux("rm", "other", "--json");
    expect(json(rm.stdout)).toMatchObject({ dataflow: "other" });
    const missing = await flux("get", "nope", "--json");
    expect(missing.code).toBe(4);
    expect(json(missing.stderr)).toMatchObject({ error: { code: "UNKNOWN_DATAFLOW", status: 404 } });
    expect((await flux("--token", "wrong", "ls")).code).toBe(5);
    // A refused WebSocket handshake says nothing itself: the client asks over HTTP and exits as for SSE.
    expect((await flux("--token", "wrong", "tail", "by-page", "--ws", "--max", "1")).code).toBe(5);
    expect((await flux("tail", "nope", "--ws", "--max", "1")).code).toBe(4);
    expect((await flux("fault", "x/p0/g0", "explode")).code).toBe(2);
    // Numbers that are not whole numbers in range are usage errors, and with --json commander's own errors are envelopes too.
    const zero = await flux("--json", "post", "other.json", "--stream", "clicks", "--batch-events", "0");
    expect(zero.code).toBe(2);
    expect(json(zero.stderr)).toEqual({ error: { code: "CLI", message: "option '--batch-events <n>' argument '0' is invalid. expected a whole number of at least 1" } });
    expect((await flux("tail", "by-page", "--max", "abc")).code).toBe(2);
    expect((await flux("status", "--watch", "--interval", "-5")).code).toBe(2);
    expect(json((await flux("--json", "bogus")).stderr)).toEqual({ error: { code: "CLI", message: "unknown command 'bogus'" } });
    const down = await startFlux(["ls"], dir, { ...env, FLUX_URL: "http://127.0.0.1:9" }).done;
    expect(down.code).toBe(6);
  }, 60_000);

  it("at a loopback URL reads missing tokens from ./.dev.vars, as npm start's server does; at no other address", async () => {
    const devDir = mkdtempSync(join(tmpdir(), "flux-cli-devvars-"));
    const noTokens = { FLUX_URL: stack.url, FLUX_TOKEN: "", FLUX_ADMIN_TOKEN: "", FLUX_CONFIG: "" };
    // Without the file the local server refuses, as before issue 26 with it too.
    const without = await startFlux(["status", "--json"], devDir, noTokens).done;
    expect(without.code).toBe(5);
    writeFileSync(join(devDir, ".dev.vars"), `# the local server's secrets\nFLUX_API_TOKEN="${STACK_TOKEN}"\nexport FLUX_ADMIN_TOKEN=${STACK_ADMIN_TOKEN}\n`);
    const status = await startFlux(["status", "--json"], devDir, noTokens).done;
    expect(status.code, status.stderr).toBe(0);
    expect(json(status.stdout)).toHaveProperty("dataflows");
    // The admin token comes from the file too (an admin-only route), and a flag still wins over it.
    const minted = await startFlux(["token", "--scope", "read", "--dataflows", "by-page", "--json"], devDir, noTokens).done;
    expect(minted.code, minted.stderr).toBe(0);
    expect((await startFlux(["--token", "wrong", "status"], devDir, noTokens).done).code).toBe(5);
    // `localhost` is a loopback name too.
    const byName = await startFlux(["status", "--json"], devDir, { ...noTokens, FLUX_URL: stack.url.replace("127.0.0.1", "localhost") }).done;
    expect(byName.code, byName.stderr).toBe(0);
    const help = await startFlux(["--help"], devDir, noTokens).done;
    expect(help.stdout).toContain("a token still missing is read from ./.dev.vars");
  }, 60_000);

  it("reads url and token from a config file; flags and environment win over it", async () => {
    writeFileSync(join(dir, "flux.config.json"), JSON.stringify({ url: stack.url, token: STACK_TOKEN }));
    const noEnv = { FLUX_URL: "", FLUX_TOKEN: "", FLUX_ADMIN_TOKEN: "" };
    const fromFile = await startFlux(["ls", "--json"], dir, noEnv).done;
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect((json(fromFile.stdout) as { dataflows: { id: string }[] }).dataflows.map((d) => d.id)).toContain("by-page");
    expect((await startFlux(["ls"], dir, { ...noEnv, FLUX_TOKEN: "wrong" }).done).code).toBe(5);
    expect((await startFlux(["--token", "wrong", "ls"], dir, noEnv).done).code).toBe(5);
  });

  it("token mints scoped tokens: a read token tails its dataflow only, an ingest token posts to its stream only", async () => {
    const minted = await flux("token", "--scope", "read", "--dataflows", "by-page", "--ttl", "600", "--json");
    expect(minted.code, minted.stderr).toBe(0);
    const read = json(minted.stdout) as { token: string; expiresAtMs: number };
    expect(read.expiresAtMs).toBeGreaterThan(Date.now());
    const scoped = { ...env, FLUX_TOKEN: read.token };
    for (const transport of [[], ["--ws"]]) {
      const tail = await startFlux(["tail", "by-page", "--max", "1", "--from-start", "--json", ...transport], dir, scoped).done;
      expect(tail.code, tail.stderr).toBe(0);
      expect(json(tail.stdout)).toMatchObject({ outputSeq: 1 });
    }
    expect((await startFlux(["ls"], dir, scoped).done).code).toBe(5);

    const ingest = json((await flux("token", "--scope", "ingest", "--streams", "clicks", "--json")).stdout) as { token: string };
    writeFileSync(join(dir, "one.ndjson"), `${JSON.stringify({ page: "p0", ts: 1_700_000_100_000, bytes: 1 })}\n`);
    const posted = await startFlux(["post", "one.ndjson", "--stream", "clicks", "--json"], dir, { ...env, FLUX_TOKEN: ingest.token }).done;
    expect(posted.code, posted.stderr).toBe(0);
    expect((json(posted.stdout) as { totals: { events: number } }).totals.events).toBe(1);
    expect((await startFlux(["get", "by-page"], dir, { ...env, FLUX_TOKEN: ingest.token }).done).code).toBe(5);
    const usage = await flux("token", "--scope", "read", "--streams", "clicks");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("read needs --dataflows");
  });

  it("token revoke revokes one token: it then gets exit 5, the other goes on; again is already-revoked; a bad id is a usage error", async () => {
    const [revoked, kept] = await Promise.all([1, 2].map(async () => json((await flux("token", "--scope", "read", "--dataflows", "by-page", "--json")).stdout) as { token: string; id: string }));
    if (!revoked || !kept) throw new Error("two tokens minted");
    const first = await flux("token", "revoke", revoked.id, "--json");
    expect(first.code, first.stderr).toBe(0);
    expect(json(first.stdout)).toMatchObject({ id: revoked.id, status: "revoked" });
    const again = await flux("token", "revoke", revoked.id);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`token ${revoked.id}: already revoked`);
    const tail = (token: string) => startFlux(["tail", "by-page", "--max", "1", "--from-start", "--json"], dir, { ...env, FLUX_TOKEN: token }).done;
    const refused = await tail(revoked.token);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain("was revoked");
    expect((await tail(kept.token)).code).toBe(0);
    expect((await flux("token", "revoke", "not-an-id")).code).toBe(2);
    expect((await startFlux(["token", "revoke", kept.id], dir, { ...env, FLUX_ADMIN_TOKEN: STACK_TOKEN }).done).code).toBe(5);
  });
});
