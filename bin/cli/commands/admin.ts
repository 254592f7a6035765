/** `flux fault REPLICA KIND` and `flux token`: the admin-token commands. */
import { Argument, Command, Option } from "commander";
import { FaultRequestSchema } from "../../../shared/wire/admin.ts";
import { action, contextOf } from "../context.ts";
import { UsageError } from "../exit-codes.ts";

const list = (text: string) => text.split(",").map((s) => s.trim()).filter(Boolean);

export function faultCommand(): Command {
  return new Command("fault")
    .description("inject a fault into a replica (needs FLUX_ENABLE_FAULTS on the server and the admin token)")
    .argument("<replica>", "replica name, e.g. clicks/p0/g0 (see flux status)")
    .addArgument(new Argument("<kind>", "crash, hang, slow, wipe or heal").choices(FaultRequestSchema.shape.kind.options))
    .action(
      action(async (replica: string, kind: "crash" | "hang" | "slow" | "wipe" | "heal", _options: object, command: Command) => {
        const ctx = contextOf(command);
        const answer = await ctx.client.fault(replica, kind);
        ctx.print(answer, () => `${answer.replica}: ${kind === "heal" ? "healed" : `${kind} injected`}`);
      }),
    );
}

export function tokenCommand(): Command {
  return new Command("token")
    .description("mint a scoped, expiring token (admin token; the server needs POST /v1/admin/tokens)")
    .addOption(new Option("--scope <scope>", "what the token allows").choices(["ingest", "read", "admin"]).makeOptionMandatory())
    .option("--streams <names>", "ingest tokens: comma-separated streams it may post to", list)
    .option("--dataflows <ids>", "read tokens: comma-separated dataflows it may read", list)
    .option("--ttl <seconds>", "lifetime in seconds", "3600")
    .action(
      action(async (options: { scope: "ingest" | "read" | "admin"; streams?: string[]; dataflows?: string[]; ttl: string }, command: Command) => {
        const ctx = contextOf(command);
        const ttlSeconds = Number(options.ttl);
        if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1) throw new UsageError(`--ttl must be a positive number of seconds, not '${options.ttl}'`);
        const answer = await ctx.client.mintToken({
          scope: options.scope,
          ttlSeconds,
          ...(options.streams ? { streams: options.streams } : {}),
          ...(options.dataflows ? { dataflows: options.dataflows } : {}),
        });
        ctx.print(answer, () => `${answer.token}\n(expires ${new Date(answer.expiresAtMs).toISOString()})`);
      }),
    );
}
