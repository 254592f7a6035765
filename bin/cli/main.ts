/**
 * The Flux CLI (`npx flux --help`): commander parses the command line; each command lives
 * in `commands/`. Exit codes are in `exit-codes.ts` and docs/CLIENT.md.
 */
import { Command, CommanderError } from "commander";
import { applyCommand } from "./commands/apply.ts";
import { faultCommand, tokenCommand } from "./commands/admin.ts";
import { postCommand } from "./commands/post.ts";
import { getCommand, lsCommand, rmCommand } from "./commands/resources.ts";
import { statusCommand } from "./commands/status.ts";
import { tailCommand } from "./commands/tail.ts";
import { DEFAULT_URL } from "./config.ts";
import { EXIT } from "./exit-codes.ts";

// With --json, a usage error commander finds itself is the CLI envelope on stderr too, without the help text.
const json = process.argv.slice(2).includes("--json");
const output = {
  outputError: (text: string, write: (text: string) => void) =>
    write(json ? `${JSON.stringify({ error: { code: "CLI", message: text.replace(/^error: /, "").trim() } })}\n` : text),
};

const program = new Command("flux")
  .description("command line for Flux on Workers: apply specs, post events, tail results, show status, inject faults")
  .option("--url <url>", `deployment URL (env FLUX_URL; default ${DEFAULT_URL})`)
  .option("--token <token>", "API token or scoped token (env FLUX_TOKEN; at a loopback URL, else FLUX_API_TOKEN of ./.dev.vars)")
  .option("--admin-token <token>", "admin token, for fault and token (env FLUX_ADMIN_TOKEN; at a loopback URL, else FLUX_ADMIN_TOKEN of ./.dev.vars)")
  .option("--config <file>", "JSON config file with url, token, adminToken (env FLUX_CONFIG; default ./flux.config.json, then ~/.config/flux/config.json)")
  .option("--json", "machine-readable output: JSON on stdout, errors as the envelope on stderr")
  .addHelpText(
    "after",
    "\nTokens: --token and --admin-token, else FLUX_TOKEN and FLUX_ADMIN_TOKEN, else the config file. When the URL is a\n" +
      "loopback address (localhost, 127.x.x.x, [::1]), a token still missing is read from ./.dev.vars (FLUX_API_TOKEN,\n" +
      "FLUX_ADMIN_TOKEN), the file npm start and wrangler dev take their secrets from; never for any other address.",
  )
  .configureOutput(output)
  .showHelpAfterError(!json)
  .exitOverride();

for (const command of [applyCommand(), lsCommand(), getCommand(), rmCommand(), postCommand(), tailCommand(), statusCommand(), faultCommand(), tokenCommand()]) {
  // Subcommands (`token revoke`) too: commander copies no settings into a command added whole.
  for (const each of [command, ...command.commands]) each.configureOutput(output).showHelpAfterError(!json).exitOverride();
  program.addCommand(command);
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  // Help and version exit 0; every other parse failure is a usage error.
  process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
}
