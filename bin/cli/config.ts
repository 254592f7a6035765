/**
 * Where the CLI connects: `--url`/`--token`/`--admin-token` flags, else the environment
 * (`FLUX_URL`, `FLUX_TOKEN`, `FLUX_ADMIN_TOKEN`), else a JSON config file (`--config`,
 * `$FLUX_CONFIG`, `./flux.config.json` or `~/.config/flux/config.json`), else the local
 * development server; for a loopback URL, tokens still missing come from `./.dev.vars`.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "./exit-codes.ts";
import { describeIssues } from "../../shared/http/describe-issues.ts";
import { devVarsTokens, isLoopbackUrl } from "./dev-vars.ts";

const ConfigFileSchema = z.strictObject({ url: z.string().url().optional(), token: z.string().min(1).optional(), adminToken: z.string().min(1).optional() });

/** The global flags every command accepts. */
export interface GlobalFlags {
  url?: string;
  token?: string;
  adminToken?: string;
  config?: string;
  json?: boolean;
}

export interface Connection {
  url: string;
  token?: string;
  adminToken?: string;
}

/** The default URL: `npm start`'s local server. */
export const DEFAULT_URL = "http://127.0.0.1:8787";

/**
 * Resolves the connection from flags, environment and config file, in that order; at a
 * loopback URL a token none of them gave comes from `cwd`'s `.dev.vars` (`FLUX_API_TOKEN`,
 * `FLUX_ADMIN_TOKEN`), as `npm start` uses them.
 */
export function resolveConnection(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Connection {
  const file = readConfigFile(flags.config ?? (env.FLUX_CONFIG || undefined));
  // An empty variable counts as unset, as in most shells' tools.
  const fromEnv = (name: string) => env[name] || undefined;
  const url = flags.url ?? fromEnv("FLUX_URL") ?? file.url ?? DEFAULT_URL;
  const dev = isLoopbackUrl(url) ? devVarsTokens(cwd) : {};
  const token = flags.token ?? fromEnv("FLUX_TOKEN") ?? file.token ?? dev.token;
  const adminToken = flags.adminToken ?? fromEnv("FLUX_ADMIN_TOKEN") ?? file.adminToken ?? dev.adminToken;
  return { url, ...(token ? { token } : {}), ...(adminToken ? { adminToken } : {}) };
}

function readConfigFile(explicit: string | undefined): z.infer<typeof ConfigFileSchema> {
  const candidates = explicit ? [explicit] : ["flux.config.json", join(homedir(), ".config", "flux", "config.json")];
  const path = candidates.find((p) => existsSync(p));
  if (!path) {
    if (explicit) throw new UsageError(`config file ${explicit} does not exist`);
    return {};
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new UsageError(`config file ${path} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = ConfigFileSchema.safeParse(value);
  if (!parsed.success) throw new UsageError(`config file ${path}: ${describeIssues(parsed.error.issues, value, [], "(root)").join("; ")}`);
  return parsed.data;
}
