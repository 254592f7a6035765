/**
 * A local Flux for browser tests: `wrangler dev` offline on a free port with a temporary
 * state directory, faults on, fixed tokens and real alarms (the monitor runs by itself).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";

export const API_TOKEN = "browser-api-token";
export const ADMIN_TOKEN = "browser-admin-token";
const TOKEN_SECRETS = "browser-secret-0123456789abcdef0123456789";

export interface LocalStack {
  url: string;
  /** A JSON call with `token` (the API token unless given). */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>, token?: string): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Starts the stack; fails with wrangler's output if it does not answer within `deadlineMs`. */
export async function startLocalStack(deadlineMs = 60_000): Promise<LocalStack> {
  const port = await freePort();
  const persist = mkdtempSync(`${tmpdir()}/flux-browser-`);
  const vars = { FLUX_ENABLE_FAULTS: "true", FLUX_API_TOKEN: API_TOKEN, FLUX_ADMIN_TOKEN: ADMIN_TOKEN, FLUX_TOKEN_SECRETS: TOKEN_SECRETS };
  const args = ["dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist, "--show-interactive-dev-session=false"];
  for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
  const child = spawn("wrangler", args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" } });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    rmSync(persist, { recursive: true, force: true });
  };
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${output}`);
    if (await fetch(`${url}/`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not answer on ${url} within ${deadlineMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const api: LocalStack["api"] = async (method, path, body, headers = {}, token = API_TOKEN) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  };
  return { url, api, stop };
}
