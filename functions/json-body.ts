/**
 * Reads request bodies strictly, before any validator (issue 11): the content type must
 * be JSON (415), the bytes valid UTF-8, the text valid JSON, nesting bounded, no
 * `__proto__` key and no key twice in one object. The body stays cached, so `zValidator("json", …)` reads the same bytes.
 */
import type { MiddlewareHandler } from "hono";
import { FluxError } from "../shared/errors.ts";
import { checkJsonShape, findDuplicateKey } from "../shared/http/json-shape.ts";
import type { AppEnv } from "./app-env.ts";

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/** Stateless between calls (no `stream` option), so one per isolate serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Decodes `body` strictly: invalid UTF-8 is a client error, never replaced by U+FFFD. */
export function decodeUtf8(body: ArrayBuffer): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw new FluxError("INVALID_JSON", "the body is not valid UTF-8; send it encoded as UTF-8");
  }
}

/** The media type of a content-type header, lower-cased, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Refuses a `charset` parameter other than UTF-8: bodies are always decoded as UTF-8, so
 * one sent in another encoding would be read as something it is not.
 */
export function requireUtf8Charset(contentType: string | undefined): void {
  for (const param of (contentType ?? "").split(";").slice(1)) {
    const [name = "", value = ""] = param.split("=").map((part) => part.trim());
    if (name.toLowerCase() !== "charset") continue;
    const charset = value.replace(/^"(.*)"$/, "$1").toLowerCase();
    if (charset !== "utf-8" && charset !== "utf8") {
      throw new FluxError("UNSUPPORTED_MEDIA_TYPE", `send the body encoded as UTF-8 (charset was '${value}'; leave it out or say charset=utf-8)`);
    }
  }
}

/** Middleware for routes whose body is one JSON document. */
export const strictJsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const mediaType = mediaTypeOf(c.req.header("content-type"));
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new FluxError("UNSUPPORTED_MEDIA_TYPE", `send the body as application/json (content-type was ${mediaType ? `'${mediaType}'` : "missing"})`);
  }
  requireUtf8Charset(c.req.header("content-type"));
  const text = decodeUtf8(await c.req.arrayBuffer());
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FluxError("INVALID_JSON", `the body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const problem = checkJsonShape(value);
  if (problem) {
    const at = problem.path.length > 0 ? ` (at ${problem.path.join(".")})` : "";
    throw new FluxError("INVALID_REQUEST", `${problem.message}${at}`, { path: problem.path });
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate) {
    throw new FluxError("INVALID_REQUEST", `${duplicate.message} (at ${duplicate.path.join(".")}): send each key once`, { path: duplicate.path });
  }
  await next();
};
