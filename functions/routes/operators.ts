/** `GET /v1/operators`: the custom operators a dataflow can name, with the JSON Schema of their parameters. */
import { Hono } from "hono";
import { z } from "zod";
import { findOperator, operatorNames } from "../../shared/operators/registry.ts";
import type { OperatorListResponse } from "../../shared/wire/api.ts";
import type { AppEnv } from "../app-env.ts";

/** The registry is fixed for the isolate's life, so its JSON Schemas are built once (each build costs milliseconds). */
let listed: OperatorListResponse | undefined;

function listOperators(): OperatorListResponse {
  const operators: OperatorListResponse["operators"] = operatorNames().flatMap((name) => {
    const found = findOperator(name);
    if (!found) return [];
    const { $schema: _dialect, ...params } = z.toJSONSchema(found.params, { io: "input", target: "draft-2020-12", unrepresentable: "any" });
    return [{ name, description: found.description, params }];
  });
  return { operators };
}

export const operatorRoutes = new Hono<AppEnv>().get("/", (c) => c.json((listed ??= listOperators())));
