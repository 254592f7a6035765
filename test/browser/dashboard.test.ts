/**
 * The dashboard in headless Chromium (issue 13), against the real Worker under `wrangler
 * dev`: it loads and shows every partition, a fault injected through the API shows up as
 * a takeover (and the page's own fault button works), live results arrive over a
 * WebSocket with a minted read token, and no token ever appears in a URL or the console.
 * With DASHBOARD_SCREENSHOT=path it also saves a screenshot there (docs/dashboard.png).
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STACK_ADMIN_TOKEN as ADMIN_TOKEN, STACK_TOKEN as API_TOKEN, startLocalStack, type LocalStack } from "../helpers/local-stack.ts";

const DATAFLOW = "dash-clicks";
const STREAM = "dash";
const KEYS = ["home", "cart", "search", "product", "checkout", "about", "help", "login"];

let stack: LocalStack;
let browser: Browser;
let page: Page;
const urls: string[] = [];
const consoleLines: string[] = [];
let seq = 0;
let load: { stop: boolean; done: Promise<void> } | undefined;

/** Demo-like load from another producer: a batch every 200 ms, each resent with its seq until it gets a 200. */
function startLoad(): { stop: boolean; done: Promise<void> } {
  const handle = { stop: false, done: Promise.resolve() };
  handle.done = (async () => {
    for (let loadSeq = 1; !handle.stop; loadSeq += 1) {
      while (!handle.stop) {
        const events = KEYS.map((page) => ({ page, ts: Date.now(), bytes: 100 }));
        const res = await stack.api("POST", `/v1/streams/${STREAM}/events`, events, { "flux-producer-id": "browser-load", "flux-seq": String(loadSeq) });
        await new Promise((r) => setTimeout(r, 200));
        if (res.status === 200) break;
      }
    }
  })();
  return handle;
}

/** Posts one event per key at event time `ts`; resends on a non-200 (a fail-over may be under way). */
async function post(ts: number): Promise<void> {
  seq += 1;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await stack.api("POST", `/v1/streams/${STREAM}/events`, KEYS.map((page) => ({ page, ts, bytes: 100 })), { "flux-producer-id": "browser-test", "flux-seq": String(seq) });
    if (res.status === 200) return;
    if (Date.now() > deadline) throw new Error(`post ${seq}: ${res.status} ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function primaryOf(partition: number): Promise<string> {
  const res = await stack.api("GET", `/v1/dataflows/${DATAFLOW}`);
  const body = res.body as { dataflow: { partitions: { partition: number; primary: string }[] } };
  const primary = body.dataflow.partitions.find((p) => p.partition === partition)?.primary;
  if (!primary) throw new Error(`no partition ${partition}`);
  return primary;
}

beforeAll(async () => {
  stack = await startLocalStack();
  const put = await stack.api("PUT", `/v1/dataflows/${DATAFLOW}`, {
    stream: STREAM,
    key: "page",
    timeField: "ts",
    window: { kind: "tumbling", sizeMs: 1_000 },
    aggregates: { n: { op: "count" }, bytes: { op: "sum", field: "bytes" } },
    partitions: 2,
  });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  page.on("request", (request) => urls.push(request.url()));
  page.on("websocket", (socket) => urls.push(socket.url()));
  page.on("console", (message) => consoleLines.push(message.text()));
}, 90_000);

afterAll(async () => {
  if (load) {
    load.stop = true;
    await load.done;
  }
  await browser?.close();
  await stack?.stop();
});

describe("the dashboard", () => {
  it("loads, and with the admin token shows every partition with roles, epochs and LSNs", async () => {
    await page.goto(`${stack.url}/dashboard`);
    await page.fill("#token", ADMIN_TOKEN);
    await page.click("#use-token");
    const card = page.locator(`.dataflow[data-dataflow="${DATAFLOW}"]`);
    await card.waitFor({ timeout: 10_000 });
    await expect.poll(() => card.locator("[data-partition-status]").allTextContents(), { timeout: 10_000 }).toEqual(["healthy", "healthy"]);
    // Its 256 key groups, half on each partition (issue 28).
    expect(await card.locator("h3").textContent()).toContain("2 partitions, 256 key groups");
    expect(await card.locator("[data-key-groups]").allTextContents()).toEqual(["128", "128"]);
    // Each replica's events per second, once its monitor has probed it twice (a dash until then).
    expect(await card.locator("[data-events-per-second]").allTextContents()).toEqual([expect.stringMatching(/^(\d+|–)$/), expect.stringMatching(/^(\d+|–)$/), expect.stringMatching(/^(\d+|–)$/), expect.stringMatching(/^(\d+|–)$/)]);
    const roles = await card.locator("td.role").allTextContents();
    expect(roles.sort()).toEqual(["primary", "primary", "standby", "standby"]);
    expect(await page.locator("#connection").textContent()).toContain("live");
  });

  it("shows live results of a chosen dataflow as windows close", async () => {
    await page.selectOption("#live-select", DATAFLOW);
    await expect.poll(() => page.locator("#live-state").textContent(), { timeout: 10_000 }).toContain("following");
    const base = Math.floor(Date.now() / 1_000) * 1_000;
    await post(base + 10);
    await post(base + 20);
    await post(base + 1_500); // closes [base, base + 1 s) on both partitions
    const rows = page.locator("#live-rows tr");
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(KEYS.length);
    const home = page.locator('#live-rows tr[data-key="home"]');
    expect(await home.textContent()).toContain("n=2");
  });

  it("shows a stage: what it reads, that it is read, and its edges caught up", async () => {
    const stage = "dash-stage";
    const put = await stack.api("PUT", `/v1/dataflows/${stage}`, { from: DATAFLOW, key: "windowStartMs", window: { kind: "tumbling", sizeMs: 1_000 }, aggregates: { views: { op: "sum", field: "values.n" } }, partitions: 1 });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const card = page.locator(`.dataflow[data-dataflow="${stage}"]`);
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator("h3").textContent()).toContain(`from ${DATAFLOW}`);
    await expect.poll(() => page.locator(`.dataflow[data-dataflow="${DATAFLOW}"] h3`).textContent(), { timeout: 10_000 }).toContain(`read by ${stage}`);
    // Both partitions of the upstream emitted the window the previous test closed: both edges catch up.
    const edges = card.locator("table.edges tbody tr");
    await expect.poll(() => edges.count(), { timeout: 10_000 }).toBe(2);
    await expect.poll(() => card.locator("table.edges tr.lagging").count(), { timeout: 10_000 }).toBe(0);
    const [from, to, produced, , acknowledged, lag] = await edges.first().locator("td").allTextContents();
    expect([from, to, lag]).toEqual([`${DATAFLOW}/p0`, "p0", "0"]);
    expect(Number(produced)).toBeGreaterThan(0);
    expect(acknowledged).toBe(produced);
  });

  it("shows a fault injected through the API as a takeover, then the recovery with its duration", async () => {
    load = startLoad();
    const victim = await primaryOf(0);
    const res = await stack.api("POST", `/v1/admin/replicas/${encodeURIComponent(victim)}/fault`, { kind: "crash" }, {}, ADMIN_TOKEN);
    expect(res.status).toBe(200);
    const takeover = page.locator(`#timeline tr[data-kind="takeover"][data-dataflow="${DATAFLOW}"]`);
    await takeover.first().waitFor({ timeout: 15_000 });
    expect(await takeover.first().textContent()).toContain("p0");
    const finished = page.locator('#timeline tr[data-kind="recovery-finished"]');
    await finished.first().waitFor({ timeout: 30_000 });
    expect(await finished.first().textContent()).toMatch(/recovery took \d+(\.\d)? s/);
    await expect.poll(() => takeover.first().textContent(), { timeout: 5_000 }).toMatch(/back to healthy after \d+(\.\d)? s/);
  }, 60_000);

  it("injects a fault from its own button, and never puts a token in a URL or the console", async () => {
    const victim = await primaryOf(1);
    await page.locator(`tr[data-replica="${victim}"] button[data-fault="crash"]`).click();
    await page.locator('#timeline tr[data-kind="takeover"]', { hasText: "p1" }).first().waitFor({ timeout: 15_000 });
    if (process.env.DASHBOARD_SCREENSHOT) {
      await new Promise((r) => setTimeout(r, 5_000)); // a few seconds of load for the rate chart
      await page.screenshot({ path: process.env.DASHBOARD_SCREENSHOT, fullPage: true });
    }
    expect(urls.some((url) => url.includes("/subscribe?"))).toBe(true);
    for (const text of [...urls, ...consoleLines]) {
      expect(text).not.toContain(ADMIN_TOKEN);
      expect(text).not.toContain(API_TOKEN);
      expect(text).not.toContain("flux1.");
    }
  }, 30_000);

  it("with the API token shows the status, without fault buttons, and explains why there are no live results", async () => {
    const context = await browser.newContext();
    const other = await context.newPage();
    try {
      await other.goto(`${stack.url}/dashboard`);
      await other.fill("#token", API_TOKEN);
      await other.click("#use-token");
      await other.locator(`.dataflow[data-dataflow="${DATAFLOW}"] td.role`).first().waitFor({ timeout: 10_000 });
      expect(await other.locator("button[data-fault]").count()).toBe(0);
      await other.selectOption("#live-select", DATAFLOW);
      await expect.poll(() => other.locator("#live-state").textContent(), { timeout: 5_000 }).toContain("need FLUX_ADMIN_TOKEN");
      expect(await page.locator("button[data-fault]").count()).toBeGreaterThan(0);
    } finally {
      await context.close();
    }
  });
});
