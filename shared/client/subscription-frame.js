/** The subscribe path of a dataflow. */
export function subscribePath(dataflow) {
    return `/v1/dataflows/${encodeURIComponent(dataflow)}/subscribe`;
}
/** JSON.parse that answers undefined for text that is not JSON (then the schema check reports it). */
export function parseJson(text) {
    try {
        return JSON.parse(text);
    }
    catch {
        return undefined;
    }
}
