/** Refused ingest requests per minute, stream and error code, as the IngestStats object stores them (issue 13). */
import { z } from "zod";
/** One minute's count of one refusal: `minuteStartMs` is epoch ms at the start of the minute. */
const RefusalCountSchema = z.object({ minuteStartMs: z.number().int(), stream: z.string(), code: z.string(), count: z.number().int().positive() });
/** The stored record; unknown fields are tolerated, `v` checked (STYLE.md §5). */
export const StoredRefusalCountsSchema = z.object({ v: z.literal(1), counts: z.array(RefusalCountSchema) });
