/**
 * The state of the window-aggregate operator, as checkpointed, and its structural check
 * on restore.
 */
import { isHllState } from "./sketches/hyperloglog.ts";
import { isTopKState } from "./sketches/space-saving.ts";
import { isKeyedWindows } from "./keyed-windows.ts";
/** Whether `value` holds exactly `count` items passing `check`; with count 0, it must be absent. */
function hasEach(value, count, check) {
    if (count === 0)
        return value === undefined;
    return Array.isArray(value) && value.length === count && value.every(check);
}
const isNumberArray = (value) => Array.isArray(value) && value.every((x) => typeof x === "number");
/** A restored state's check: the windows' shape, and exactly one sketch per `distinct` and one summary per `topk` aggregate (none: no field). */
export function isWindowAggregateState(value, sketchCount, summaryCount) {
    return isKeyedWindows(value, (acc) => typeof acc.n === "number" &&
        isNumberArray(acc.sum) &&
        isNumberArray(acc.min) &&
        isNumberArray(acc.max) &&
        hasEach(acc.hll, sketchCount, isHllState) &&
        hasEach(acc.top, summaryCount, isTopKState));
}
