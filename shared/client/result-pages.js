/** Results as an async iterator over pages: follows `next` until the last page. */
import { ResultsResponseSchema } from "../wire/api.ts";
/** Yields every page of results, in (window start, key) order. */
export async function* resultPages(http, dataflow, query = {}) {
    let after = query.after;
    for (;;) {
        const page = await http.json(ResultsResponseSchema, "GET", `/v1/dataflows/${encodeURIComponent(dataflow)}/results`, {
            query: { key: query.key, from: query.from, to: query.to, limit: query.limit, after },
        });
        yield page;
        if (page.next === null)
            return;
        after = page.next;
    }
}
