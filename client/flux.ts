/**
 * Entry point of the client SDK for Node ≥ 20, browsers and Workers:
 * `createFluxClient({ url, token })`. See docs/CLIENT.md.
 */
import { FluxClient } from "../shared/client/flux-client.ts";
import type { ConnectionOptions } from "../shared/client/http.ts";
import type { ClientRuntime } from "../shared/client/runtime.ts";
import { defaultRuntime } from "./runtime.ts";

/** Connects to a deployment with the platform's globals; `runtime` replaces parts of them. */
export function createFluxClient(options: Omit<ConnectionOptions, "runtime"> & { runtime?: Partial<ClientRuntime> }): FluxClient {
  return new FluxClient({ ...options, runtime: defaultRuntime(options.runtime) });
}
