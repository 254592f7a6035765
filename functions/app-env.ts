/** The Hono environment shared by every route: bindings plus per-request config, caller and the per-isolate caches. */
import type { FluxConfig } from "../shared/config.ts";
import type { RoutingCache } from "../shared/router/routing-cache.ts";
import type { Principal } from "../shared/tokens/access.ts";
import type { SuspectReports } from "./suspect-reports.ts";

export interface AppEnv {
  Bindings: Env;
  Variables: { config: FluxConfig; routingCache: RoutingCache; suspects: SuspectReports; principal: Principal };
}
