/**
 * Builds the Hono app: error envelope, `/v1` access control, config parsing and the
 * resource routes. One app per isolate; its routing and dataflow caches, revocation list, slow-call reports and write coalescer live in the closure.
 */
import { Hono, type Context, type MiddlewareHandler, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { parseFluxConfig, type FluxConfig } from "../shared/config.ts";
import { FluxError } from "../shared/errors.ts";
import { buildOpenApi } from "../shared/openapi.ts";
import { DataflowCache } from "../shared/router/dataflow-cache.ts";
import { RoutingCache } from "../shared/router/routing-cache.ts";
import { RevocationCache } from "../shared/tokens/revocation-cache.ts";
import { countWorkerRequest } from "../platform/counters.ts";
import type { WriteCoalescer } from "../shared/router/write-coalescer.ts";
import type { AppEnv } from "./app-env.ts";
import { fetchRevokedTokens, newCoalescer } from "./cluster.ts";
import { authenticate } from "./auth.ts";
import { SuspectReports } from "./suspect-reports.ts";
import { errorResponse, onError, onNotFound } from "./http-errors.ts";
import { noQueryParameters, refuseNamelessParameter, ROUTES_WITHOUT_QUERY } from "./no-query.ts";
import { refuseStrayUpgrade } from "./no-upgrade.ts";
import { adminRoutes } from "./routes/admin.ts";
import { dataflowRoutes } from "./routes/dataflows.ts";
import { eventsRoutes } from "./routes/events.ts";
import { operatorRoutes } from "./routes/operators.ts";
import { resultsRoutes } from "./routes/results.ts";
import { streamRoutes } from "./routes/streams.ts";
import { statusRoutes } from "./routes/status.ts";
import { subscribeRoutes } from "./routes/subscribe.ts";
import { tokenRoutes } from "./routes/tokens.ts";

/**
 * The deployment's configuration. An invalid `[vars]` value is the operator's to fix, not
 * the caller's and not a bug: the 500 says so, and the log line names the variable.
 */
function configOf(c: Context<AppEnv>): FluxConfig {
  try {
    return parseFluxConfig(c.env);
  } catch (err) {
    // Names only: a value may be anything, and the log is read more widely than wrangler.toml.
    const names = err instanceof z.ZodError ? [...new Set(err.issues.map((issue) => String(issue.path[0])))].join(", ") : String(err);
    console.error(`invalid configuration: ${names} (docs/CONFIGURATION.md)`, { method: c.req.method, path: c.req.path });
    throw new FluxError("INTERNAL", "internal error: this deployment's configuration ([vars] in wrangler.toml) is invalid, so it answers 500 until its operator fixes it; the Worker log names the variable");
  }
}

/** Creates the Worker's app. */
export function createApp(): Hono<AppEnv> {
  let cache: { config: FluxConfig; routing: RoutingCache; dataflows: DataflowCache; revocations: RevocationCache; suspects: SuspectReports; coalescer: WriteCoalescer } | undefined;
  const app = new Hono<AppEnv>();
  app.onError(onError);
  app.notFound(onNotFound);
  // Few middleware layers on every request: each costs a promise and a dispatch (issue 12's profile).
  app.use("*", async (c, next) => {
    countWorkerRequest();
    refuseStrayUpgrade(c);
    await next();
  });
  app.get("/", (c) => c.json({ name: "flux-on-workers", api: "/v1", docs: "see README.md and docs/API.md" }));

  app.use("/v1/*", async (c, next) => {
    if (!cache) {
      const config = configOf(c);
      const env = c.env;
      const revocations = new RevocationCache(config.revocationCacheMs, () => fetchRevokedTokens(env, config));
      cache = { config, routing: new RoutingCache(config.routingCacheMs), dataflows: new DataflowCache(config.routingCacheMs), revocations, suspects: new SuspectReports(), coalescer: newCoalescer(config) };
    }
    c.set("config", cache.config);
    c.set("routingCache", cache.routing);
    c.set("dataflowCache", cache.dataflows);
    c.set("revocations", cache.revocations);
    c.set("suspects", cache.suspects);
    c.set("coalescer", cache.coalescer);
    await next();
  });
  // The API description is public; without FLUX_ENABLE_FAULTS the fault and counters routes do not exist, whatever the token.
  const openapi = buildOpenApi();
  app.get("/v1/openapi.json", (c) => c.json(openapi));
  const onlyWithFaults = async (c: Context<AppEnv>, next: Next) => {
    if (!c.var.config.enableFaults) throw new FluxError("NOT_FOUND", `no route for ${c.req.method} ${c.req.path}`);
    await next();
  };
  app.use("/v1/admin/replicas/*", onlyWithFaults);
  app.use("/v1/admin/counters", onlyWithFaults);
  // Built once per isolate with its configuration (the limit is fixed for the isolate's life).
  let limitBody: MiddlewareHandler<AppEnv> | undefined;
  // In this order: access control, the body limit, then a query parameter without a name.
  app.use("/v1/*", async (c, next) => {
    await authenticate(c);
    const rest = async () => {
      refuseNamelessParameter(c);
      await next();
    };
    const { maxBodyBytes } = c.get("config");
    const tooLarge = (c2: Context) => errorResponse(c2, new FluxError("PAYLOAD_TOO_LARGE", `request body exceeds ${maxBodyBytes} bytes`, { limit: maxBodyBytes }));
    // A POST or PUT that states its length, the usual case, is judged by it as the middleware
    // would judge it, without making its body a stream first (about 1% of the profiled samples at P=4, R=2).
    const length = c.req.raw.headers.get("content-length");
    if (length !== null && (c.req.method === "POST" || c.req.method === "PUT") && !c.req.raw.headers.has("transfer-encoding")) {
      return parseInt(length, 10) > maxBodyBytes ? tooLarge(c) : rest();
    }
    limitBody ??= bodyLimit({ maxSize: maxBodyBytes, onError: tooLarge });
    return limitBody(c, rest);
  });

  for (const [methods, path] of ROUTES_WITHOUT_QUERY) app.on(methods, path, noQueryParameters);

  app.route("/v1/dataflows", dataflowRoutes);
  app.route("/v1/dataflows", resultsRoutes);
  app.route("/v1/dataflows", subscribeRoutes);
  app.route("/v1/streams", eventsRoutes);
  app.route("/v1/streams", streamRoutes);
  app.route("/v1/operators", operatorRoutes);
  app.route("/v1/status", statusRoutes);
  app.route("/v1/admin/tokens", tokenRoutes);
  app.route("/v1/admin", adminRoutes);
  return app;
}
