/**
 * Bearer-token access control for `/v1` (issue 2): tokens are compared in constant time
 * (Hono's `timingSafeEqual` hashes both sides first), and a deployment without a token
 * refuses every request instead of running open.
 */
import type { MiddlewareHandler } from "hono";
import { timingSafeEqual } from "hono/utils/buffer";
import { FluxError } from "../shared/errors.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Middleware that requires `Authorization: Bearer <token>` matching `expected(env)`.
 * `mistaken`, when given, names another token a caller may send by mistake (the API
 * token on an admin route), so the answer can say which token is needed.
 */
export function requireBearer(
  secretName: string,
  expected: (env: Env) => string | undefined,
  mistaken?: { token: (env: Env) => string | undefined; message: string },
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = expected(c.env);
    if (token === undefined || token === "") {
      throw new FluxError("NOT_CONFIGURED", `${secretName} is not set; this deployment refuses requests until it is (wrangler secret put ${secretName})`);
    }
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new FluxError("UNAUTHORIZED", "missing bearer token: send Authorization: Bearer <token>");
    if (!(await timingSafeEqual(match[1], token))) {
      const other = mistaken?.token(c.env);
      if (mistaken && other && (await timingSafeEqual(match[1], other))) throw new FluxError("UNAUTHORIZED", mistaken.message);
      throw new FluxError("UNAUTHORIZED", `wrong bearer token: send the ${secretName} value`);
    }
    await next();
  };
}
