/**
 * The local development server's tokens (issue 26): `npm start` and `wrangler dev` take
 * their secrets from `.dev.vars` in the project folder, so a CLI pointed at a loopback
 * address reads the same file, as wrangler does, when no token was given otherwise. Never
 * for any other address: a deployment's tokens never come from a file lying around.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "dotenv";

/** Whether `url` names this machine: `localhost`, an address in 127.0.0.0/8, or `[::1]`. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The API and admin tokens of `dir/.dev.vars` (dotenv format, as wrangler parses it), or none. */
export function devVarsTokens(dir: string): { token?: string; adminToken?: string } {
  const path = join(dir, ".dev.vars");
  if (!existsSync(path)) return {};
  const vars = parse(readFileSync(path, "utf8"));
  return { ...(vars.FLUX_API_TOKEN ? { token: vars.FLUX_API_TOKEN } : {}), ...(vars.FLUX_ADMIN_TOKEN ? { adminToken: vars.FLUX_ADMIN_TOKEN } : {}) };
}
