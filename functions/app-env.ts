/** The Hono environment shared by every route: bindings plus per-request config, cache and caller. */
import type { FluxConfig } from "../shared/config.ts";
import type { RoutingCache } from "../shared/router/routing-cache.ts";
import type { Principal } from "../shared/tokens/access.ts";

export interface AppEnv {
  Bindings: Env;
  Variables: { config: FluxConfig; routingCache: RoutingCache; principal: Principal };
}
