/**
 * The client SDK wired to the Worker in workerd: requests go through `exports.default.fetch`,
 * and every 503 the client sees first fires the monitor's alarm (tests never sleep for
 * alarms), the way a router's failure report makes the real monitor probe at once.
 */
import { exports } from "cloudflare:workers";
import { defaultRuntime, openSocketThroughFetch } from "../../client/runtime.ts";
import { FluxClient } from "../../shared/client/flux-client.ts";
import type { ResponseLike } from "../../shared/client/runtime.ts";
import { tick } from "./fault-client.ts";

/** A client for the test deployment (test tokens), with short backoff. */
export function sdkClient(): FluxClient {
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    const res = await exports.default.fetch(new Request(url, init));
    if (res.status === 503) await tick();
    return res;
  };
  return new FluxClient({
    url: "https://flux.test",
    token: "test-token",
    adminToken: "test-admin-token",
    retry: { maxAttempts: 20, backoff: { baseMs: 1, maxMs: 20 } },
    runtime: defaultRuntime({
      fetch: (url, init) => fetch(url, init) as Promise<ResponseLike>,
      openSocket: openSocketThroughFetch((url, init) => exports.default.fetch(new Request(url, init))),
    }),
  });
}
