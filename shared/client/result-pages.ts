/** Results as an async iterator over pages: follows `next` until the last page. */
import { ResultsResponseSchema, type ResultsResponse } from "../wire/api.ts";
import type { HttpClient } from "./http.ts";

/** `GET /v1/dataflows/{id}/results` parameters; `after` starts from a page cursor. */
export interface ResultsQuery {
  key?: string;
  /** Windows overlapping [from, to), epoch ms. */
  from?: number;
  to?: number;
  /** Results per page (1 to 10,000; the server's default is 1,000). */
  limit?: number;
  after?: string;
}

/** Yields every page of results, in (window start, key) order. */
export async function* resultPages(http: HttpClient, dataflow: string, query: ResultsQuery = {}): AsyncGenerator<ResultsResponse> {
  let after = query.after;
  for (;;) {
    const page = await http.json(ResultsResponseSchema, "GET", `/v1/dataflows/${encodeURIComponent(dataflow)}/results`, {
      query: { key: query.key, from: query.from, to: query.to, limit: query.limit, after },
    });
    yield page;
    if (page.next === null) return;
    after = page.next;
  }
}
