/** `flux fault REPLICA KIND`, `flux token` and `flux token revoke ID`: the admin-token commands. */
import { Argument, Command, Option } from "commander";
import { FaultRequestSchema } from "../../../shared/wire/admin.ts";
import { MAX_TOKEN_TTL_SECONDS, MintTokenRequestSchema, TokenIdSchema } from "../../../shared/wire/tokens.ts";
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
    .description("mint a scoped, expiring token (admin token): ingest into streams, read dataflows, or admin; `token revoke ID` revokes one")
    // Not mandatory in commander's sense: it would then be demanded of `token revoke` too.
    .addOption(new Option("--scope <scope>", "what the token allows (required)").choices(["ingest", "read", "admin"]))
    .option("--streams <names>", "ingest tokens: comma-separated streams it may post to", list)
    .option("--dataflows <ids>", "read tokens: comma-separated dataflows it may read", list)
    .option("--ttl <seconds>", `lifetime in seconds (at most ${MAX_TOKEN_TTL_SECONDS})`, "3600")
    .addCommand(revokeCommand())
    .action(
      action(async (options: { scope?: "ingest" | "read" | "admin"; streams?: string[]; dataflows?: string[]; ttl: string }, command: Command) => {
        const ctx = contextOf(command);
        if (!options.scope) throw new UsageError("token: --scope is required (ingest, read or admin)");
        const asked = {
          scope: options.scope,
          ttlSeconds: Number(options.ttl),
          ...(options.streams ? { streams: options.streams } : {}),
          ...(options.dataflows ? { dataflows: options.dataflows } : {}),
        };
        const request = MintTokenRequestSchema.safeParse(asked);
        if (!request.success) throw new UsageError(`token: ${describeIssues(request.error.issues, asked, [], "(request)").join("; ")} (ingest needs --streams, read needs --dataflows, admin neither; --ttl at most ${MAX_TOKEN_TTL_SECONDS})`);
        const answer = await ctx.client.mintToken(request.data);
        ctx.print(answer, () => `${answer.token}\n(id ${answer.id}, expires ${new Date(answer.expiresAtMs).toISOString()})`);
      }),
    );
}

function revokeCommand(): Command {
  return new Command("revoke")
    .description("revoke a minted token by its id (admin token): every router refuses it within FLUX_REVOCATION_CACHE_MS")
    .argument("<id>", "the token's id, from the mint answer (16 characters)")
    .action(
      action(async (id: string, _options: object, command: Command) => {
        const ctx = contextOf(command);
        if (!TokenIdSchema.safeParse(id).success) throw new UsageError(`token revoke: '${id}' is not a token id (16 characters of A-Z, a-z, 0-9, '-' and '_', as the mint answer names it)`);
        const answer = await ctx.client.revokeToken(id);
        const when = new Date(answer.effectiveEverywhereAtMs).toISOString();
        ctx.print(answer, () => (answer.status === "revoked" ? `token ${id}: revoked; refused everywhere from ${when}` : `token ${id}: already revoked (refused everywhere since ${when})`));
      }),
    );
}
