import { backoffDelayMs, DEFAULT_BACKOFF, parseRetryAfter } from "./backoff.ts";
import { errorFromAnswer, FluxClientError, networkError } from "./client-error.ts";
import { sleep } from "./runtime.ts";
/** HTTP for the SDK's typed calls. */
export class HttpClient {
    runtime;
    backoff;
    base;
    maxAttempts;
    options;
    constructor(options) {
        this.options = options;
        this.runtime = options.runtime;
        this.base = options.url.replace(/\/+$/, "");
        this.maxAttempts = options.retry?.maxAttempts ?? 5;
        this.backoff = options.retry?.backoff ?? DEFAULT_BACKOFF;
    }
    /** The absolute URL of `path` with its query string. */
    url(path, query = {}) {
        const pairs = Object.entries(query).filter((entry) => entry[1] !== undefined);
        const search = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join("&");
        return `${this.base}${path}${search ? `?${search}` : ""}`;
    }
    /** The token a call with `auth` sends, if any. */
    token(auth) {
        return auth === "api" ? this.options.token : auth === "admin" ? this.options.adminToken : undefined;
    }
    /** Sends once. @throws FluxClientError on a network failure or a non-2xx answer */
    async send(method, path, call = {}) {
        const headers = { ...call.headers };
        const token = this.token(call.auth ?? "api");
        if (token !== undefined)
            headers.authorization = `Bearer ${token}`;
        let body;
        if (call.rawBody) {
            body = call.rawBody.text;
            headers["content-type"] = call.rawBody.contentType;
        }
        else if (call.body !== undefined) {
            body = JSON.stringify(call.body);
            headers["content-type"] = "application/json";
        }
        const url = this.url(path, call.query);
        let res;
        try {
            res = await this.runtime.fetch(url, { method, headers, ...(body === undefined ? {} : { body }), ...(call.keepalive ? { keepalive: true } : {}) });
        }
        catch (err) {
            throw networkError(url, err);
        }
        if (res.status >= 200 && res.status < 300)
            return res;
        throw errorFromAnswer(res.status, await res.text().catch(() => ""), parseRetryAfter(res.headers.get("retry-after"), this.runtime.now()));
    }
    /**
     * Sends and parses the JSON answer with `schema`, retrying retryable failures up to
     * the configured attempts (only for calls that are safe to repeat).
     */
    async json(schema, method, path, call = {}) {
        for (let attempt = 0;; attempt++) {
            try {
                return parseAnswer(schema, await this.send(method, path, call));
            }
            catch (err) {
                if (!(err instanceof FluxClientError) || !err.retryable || attempt + 1 >= this.maxAttempts)
                    throw err;
                await sleep(this.runtime, backoffDelayMs(attempt, this.backoff, this.runtime.random(), err.retryAfterMs));
            }
        }
    }
}
/** Parses a 2xx answer's JSON body. @throws FluxClientError `BAD_RESPONSE` when it does not fit */
export async function parseAnswer(schema, res) {
    const text = await res.text();
    let value;
    try {
        value = JSON.parse(text);
    }
    catch (cause) {
        throw new FluxClientError(res.status, "BAD_RESPONSE", `answer is not JSON: ${text.slice(0, 200)}`, { cause });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success)
        throw new FluxClientError(res.status, "BAD_RESPONSE", `answer does not fit the API: ${parsed.error.message.slice(0, 300)}`);
    return parsed.data;
}
