/**
 * Checks a parsed JSON body before any schema sees it (issue 11): nesting is bounded
 * without recursion (a deep filter once overflowed the stack inside validation), and
 * `__proto__` keys are refused, since object records would drop them silently.
 */
/** How deeply objects and arrays may nest in a request body other than events. */
export const MAX_JSON_DEPTH = 64;
/**
 * Walks `value` iteratively. @returns the first problem: nesting deeper than `maxDepth`
 * levels of objects and arrays, or an object key `__proto__`; null when there is none.
 */
export function checkJsonShape(value, maxDepth = MAX_JSON_DEPTH) {
    const stack = [{ value, path: [] }];
    for (let item = stack.pop(); item; item = stack.pop()) {
        if (typeof item.value !== "object" || item.value === null)
            continue;
        if (item.path.length >= maxDepth) {
            return { message: `the body nests more than ${maxDepth} levels of objects and arrays`, path: item.path };
        }
        if (Array.isArray(item.value)) {
            item.value.forEach((v, i) => stack.push({ value: v, path: [...item.path, i] }));
            continue;
        }
        for (const [key, v] of Object.entries(item.value)) {
            if (key === "__proto__")
                return { message: "'__proto__' is not allowed as a key", path: [...item.path, key] };
            stack.push({ value: v, path: [...item.path, key] });
        }
    }
    return null;
}
