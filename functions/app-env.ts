/** The Hono environment shared by every route: bindings plus per-request config, caller and the per-isolate caches. */
import type { FluxConfig } from "../shared/config.ts";
import type { DataflowCache } from "../shared/router/dataflow-cache.ts";
import type { RoutingCache } from "../shared/router/routing-cache.ts";
import type { WriteCoalescer } from "../shared/router/write-coalescer.ts";
import type { Principal } from "../shared/tokens/access.ts";
import type { RevocationCache } from "../shared/tokens/revocation-cache.ts";
import type { SuspectReports } from "./suspect-reports.ts";

export interface AppEnv {
  Bindings: Env;
  /**
   * `coalescer`: the isolate's batching of concurrent writes to the same primary (issue 12); `revocations`: its copy of the revoked token ids (issue 26);
   * `dataflowCache`: its readers' copy of dataflow records (issue 29).
   */
  Variables: { config: FluxConfig; routingCache: RoutingCache; dataflowCache: DataflowCache; suspects: SuspectReports; coalescer: WriteCoalescer; revocations: RevocationCache; principal: Principal };
}
