/** The Hono environment shared by every route: bindings plus per-request config and cache. */
import type { FluxConfig } from "../shared/config.ts";
import type { RoutingCache } from "../shared/router/routing-cache.ts";

export interface AppEnv {
  Bindings: Env;
  Variables: { config: FluxConfig; routingCache: RoutingCache };
}
