/** `flux fault REPLICA KIND` and `flux token`: the admin-token commands. */
import { Argument, Command, Option } from "commander";
import { FaultRequestSchema } from "../../../shared/wire/admin.ts";
import { MAX_TOKEN_TTL_SECONDS, MintTokenRequestSchema } from "../../../shared/wire/tokens.ts";
import { action, contextOf } from "../context.ts";
import { UsageError } from "../exit-codes.ts";
import { describeIssues } from "../../../shared/http/describe-issues.ts";

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
    .description("mint a scoped, expiring token (admin token): ingest into streams, read dataflows, or admin")
    .addOption(new Option("--scope <scope>", "what the token allows").choices(["ingest", "read", "admin"]).makeOptionMandatory())
    .option("--streams <names>", "ingest tokens: comma-separated streams it may post to", list)
    .option("--dataflows <ids>", "read tokens: comma-separated dataflows it may read", list)
    .option("--ttl <seconds>", `lifetime in seconds (at most ${MAX_TOKEN_TTL_SECONDS})`, "3600")
    .action(
      action(async (options: { scope: "ingest" | "read" | "admin"; streams?: string[]; dataflows?: string[]; ttl: string }, command: Command) => {
        const ctx = contextOf(command);
        const asked = {
          scope: options.scope,
          ttlSeconds: Number(options.ttl),
          ...(options.streams ? { streams: options.streams } : {}),
          ...(options.dataflows ? { dataflows: options.dataflows } : {}),
        };
        const request = MintTokenRequestSchema.safeParse(asked);
        if (!request.success) throw new UsageError(`token: ${describeIssues(request.error.issues, asked, [], "(request)").join("; ")} (ingest needs --streams, read needs --dataflows, admin neither; --ttl at most ${MAX_TOKEN_TTL_SECONDS})`);
        const answer = await ctx.client.mintToken(request.data);
        ctx.print(answer, () => `${answer.token}\n(expires ${new Date(answer.expiresAtMs).toISOString()})`);
      }),
    );
}
