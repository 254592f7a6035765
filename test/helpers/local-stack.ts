/**
 * A local stack for the CLI and browser tests: `wrangler dev` offline on free ports with
 * its own persist directory, faults on, fixed tokens and real alarms (the monitor runs by
 * itself), plus a runner for `bin/flux.mjs` on this Node.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const STACK_TOKEN = "cli-test-token";
export const STACK_ADMIN_TOKEN = "cli-test-admin-token";

/** A port the OS says is free right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export interface LocalStack {
  url: string;
  /** A JSON call with `token` (the API token unless given). */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>, token?: string): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

/** Starts `wrangler dev` and waits until it answers (at most `timeoutMs`). */
export async function startLocalStack(timeoutMs = 90_000): Promise<LocalStack> {
  const [port, inspector] = [await freePort(), await freePort()];
  const persist = mkdtempSync(join(tmpdir(), "flux-cli-stack-"));
  const args = ["dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector), "--persist-to", persist, "--show-interactive-dev-session=false"];
  for (const v of ["FLUX_ENABLE_FAULTS:true", `FLUX_API_TOKEN:${STACK_TOKEN}`, `FLUX_ADMIN_TOKEN:${STACK_ADMIN_TOKEN}`, "FLUX_TOKEN_SECRETS:cli-test-secret-0123456789abcdef0123456789"]) {
    args.push("--var", v);
  }
  const child = spawn(join("node_modules", ".bin", "wrangler"), args, {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
  });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await kill(child);
    rmSync(persist, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await fetch(`${url}/`).then((r) => r.ok, () => false)) return { url, api: jsonCaller(url), stop };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not answer on ${url} within ${timeoutMs} ms:\n${log.slice(-2_000)}`);
}

function jsonCaller(url: string): LocalStack["api"] {
  return async (method, path, body, headers = {}, token = STACK_TOKEN) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid, "SIGTERM"); // the whole group: wrangler and its workerd
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
  if (child.exitCode === null) process.kill(-child.pid, "SIGKILL");
}

export interface FluxRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `flux ARGS` (bin/flux.mjs on this Node) in `cwd`; `done` resolves when it exits. */
export function startFlux(args: readonly string[], cwd: string, env: Record<string, string> = {}): { child: ChildProcess; done: Promise<FluxRun> } {
  const child = spawn(process.execPath, [join(process.cwd(), "bin", "flux.mjs"), ...args], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<FluxRun>((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}
