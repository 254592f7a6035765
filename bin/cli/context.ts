/**
 * What every command gets: a client built from the resolved connection, whether `--json`
 * was asked for, and the wrapper that turns a command's outcome into an exit code.
 */
import type { Command } from "commander";
import { createFluxClient } from "../../client/flux.ts";
import { FluxClientError } from "../../shared/client/client-error.ts";
import type { FluxClient } from "../../shared/client/flux-client.ts";
import { resolveConnection, type GlobalFlags } from "./config.ts";
import { EXIT, exitCodeFor } from "./exit-codes.ts";
import { openSocketWithHeaders } from "./node-socket.ts";

export interface CommandContext {
  client: FluxClient;
  json: boolean;
  url: string;
  /** Prints a value: as JSON with `--json`, else as the command's human text. */
  print(value: unknown, human: () => string): void;
}

/** The context of the running command. */
export function contextOf(command: Command): CommandContext {
  const flags = command.optsWithGlobals<GlobalFlags>();
  const connection = resolveConnection(flags);
  const client = createFluxClient({ ...connection, runtime: { openSocket: openSocketWithHeaders } });
  const json = flags.json === true;
  return {
    client,
    json,
    url: connection.url,
    print: (value, human) => {
      process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
    },
  };
}

/** Wraps a command's action: errors are printed (as the envelope with `--json`) and mapped to an exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      process.exitCode = (await fn(...args)) ?? EXIT.OK;
    } catch (err) {
      const command = args[args.length - 1] as Command;
      const json = command.optsWithGlobals<GlobalFlags>().json === true;
      process.stderr.write(`${describeError(err, json)}\n`);
      process.exitCode = exitCodeFor(err);
    }
  };
}

function describeError(err: unknown, json: boolean): string {
  if (err instanceof FluxClientError) {
    const envelope = { error: { code: err.code, message: err.message, status: err.status, ...(err.details === undefined ? {} : { details: err.details }) } };
    return json ? JSON.stringify(envelope) : `flux: ${err.code}${err.status ? ` (${err.status})` : ""}: ${err.message}${err.details === undefined ? "" : `\n${JSON.stringify(err.details, null, 2)}`}`;
  }
  const message = err instanceof Error ? err.message : String(err);
  return json ? JSON.stringify({ error: { code: "CLI", message } }) : `flux: ${message}`;
}
