import { FluxError } from "../errors.ts";
import { issueText } from "../http/describe-issues.ts";
import { eventSchemaOf } from "../wire/stream-schema.ts";
import { MAX_REPORTED_PROBLEMS } from "./route-events.ts";
/** Compiled event schemas, by declaration (routers keep declarations in their routing cache). */
const compiled = new WeakMap();
/** @throws FluxError `INVALID_EVENT` naming each bad field of the first bad events. */
export function checkStreamEvents(stream, schema, events) {
    let eventSchema = compiled.get(schema);
    if (!eventSchema)
        compiled.set(schema, (eventSchema = eventSchemaOf(schema)));
    const problems = [];
    let problemCount = 0;
    events.forEach((event, index) => {
        const result = eventSchema.safeParse(event);
        if (result.success)
            return;
        for (const issue of result.error.issues) {
            problemCount += 1;
            const at = issue.path.map(String).join(".");
            // An undeclared field (with `additionalFields: false`) is named by the field itself.
            const field = issue.code === "unrecognized_keys" ? issue.keys.map((k) => (at ? `${at}.${k}` : k)).join(", ") : at;
            if (problems.length < MAX_REPORTED_PROBLEMS)
                problems.push({ index, field, problem: issueText(issue, event) });
        }
    });
    if (problemCount > 0) {
        throw new FluxError("INVALID_EVENT", `${problemCount} problem(s) against the schema of stream '${stream}'; nothing was applied`, { problems, problemCount });
    }
}
