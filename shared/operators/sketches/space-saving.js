/**
 * Weighted Space-Saving heavy hitters (Metwally et al. 2005) for top-k window aggregates.
 * With capacity c and total weight W: every item whose true weight exceeds W/c is
 * monitored; a monitored item's `count` overestimates its true weight by at most its
 * `error` ≤ W/c, so `count - error ≤ true ≤ count`; while at most c distinct items have
 * been seen, counts are exact (error 0). State is a plain JSON value that depends only
 * on the (item, weight) sequence, so replicas agree byte for byte. With non-integer
 * weights, or sums beyond 2^53, the bounds hold up to floating-point rounding.
 */
/** An empty summary monitoring at most `capacity` items (a positive integer; RangeError otherwise). */
export function topKCreate(capacity) {
    if (!Number.isInteger(capacity) || capacity < 1) {
        throw new RangeError(`top-k capacity ${capacity} is not a positive integer`);
    }
    return { cap: capacity, total: 0, items: [], at: {} };
}
/**
 * Adds `weight` (default 1) to `item` (mutates and returns `state`), O(log cap). A weight
 * that is not a finite number > 0 is a no-op: callers validate weights, and a negative
 * weight would void the bounds. When the summary is full and `item` is not monitored, it
 * replaces the item with the smallest count (ties: the smallest item by string order),
 * taking count = that minimum + weight and error = that minimum.
 */
export function topKAdd(state, item, weight = 1) {
    if (!(weight > 0) || weight === Number.POSITIVE_INFINITY)
        return state;
    const { items, at } = state;
    state.total += weight;
    const key = `$${item}`;
    const position = at[key];
    if (position !== undefined) {
        const entry = items[position]; // `at` only holds positions of live entries
        entry[1] += weight;
        siftDown(state, position);
    }
    else if (items.length < state.cap) {
        items.push([item, weight, 0]);
        at[key] = items.length - 1;
        siftUp(state, items.length - 1);
    }
    else {
        const evicted = items[0]; // a full summary has cap ≥ 1 entries
        const min = evicted[1];
        delete at[`$${evicted[0]}`];
        items[0] = [item, min + weight, min];
        at[key] = 0;
        siftDown(state, 0);
    }
    return state;
}
/**
 * The `k` heaviest monitored items by count, descending, ties broken by value ascending
 * (string `<`). `count` is an upper bound of the item's true weight and `count - error` a
 * lower bound. Returns fresh objects; k ≤ 0 gives an empty list.
 */
export function topKTop(state, k) {
    if (!(k > 0))
        return [];
    return [...state.items]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .slice(0, k)
        .map(([value, count, error]) => ({ value, count, error }));
}
/**
 * Structural check for restoring a checkpoint, O(cap): field types, at most `cap` entries
 * with 0 ≤ error ≤ count, the heap order, and an `at` index that matches `items` exactly.
 */
export function isTopKState(value) {
    if (typeof value !== "object" || value === null)
        return false;
    const { cap, total, items, at } = value;
    if (typeof cap !== "number" || !Number.isInteger(cap) || cap < 1)
        return false;
    if (typeof total !== "number" || !Number.isFinite(total) || total < 0)
        return false;
    if (!Array.isArray(items) || items.length > cap)
        return false;
    if (typeof at !== "object" || at === null || Array.isArray(at))
        return false;
    const index = at;
    if (Object.keys(index).length !== items.length)
        return false;
    for (let i = 0; i < items.length; i++) {
        const entry = items[i];
        if (!Array.isArray(entry) || entry.length !== 3)
            return false;
        const [item, count, error] = entry;
        if (typeof item !== "string" || typeof count !== "number" || typeof error !== "number")
            return false;
        if (!(count > 0 && error >= 0 && error <= count) || count === Number.POSITIVE_INFINITY)
            return false;
        if (index[`$${item}`] !== i)
            return false;
        if (i > 0 && isBefore(entry, items[(i - 1) >> 1]))
            return false;
    }
    return true;
}
/** Heap order: smaller count first, then smaller item. Items are distinct, so it is total. */
function isBefore(a, b) {
    return a[1] < b[1] || (a[1] === b[1] && a[0] < b[0]);
}
/** Moves the entry at `position` towards the root until its parent comes before it. */
function siftUp(state, position) {
    let child = position;
    while (child > 0) {
        const parent = (child - 1) >> 1;
        if (!isBefore(state.items[child], state.items[parent]))
            return;
        swap(state, child, parent);
        child = parent;
    }
}
/** Moves the entry at `position` towards the leaves until it comes before both children. */
function siftDown(state, position) {
    const { items } = state;
    let parent = position;
    for (;;) {
        let first = parent;
        const left = items[2 * parent + 1];
        const right = items[2 * parent + 2];
        if (left !== undefined && isBefore(left, items[first]))
            first = 2 * parent + 1;
        if (right !== undefined && isBefore(right, items[first]))
            first = 2 * parent + 2;
        if (first === parent)
            return;
        swap(state, parent, first);
        parent = first;
    }
}
/** Swaps two heap entries and keeps `at` in step. */
function swap(state, i, j) {
    const { items, at } = state;
    const a = items[i]; // both positions are within the heap
    const b = items[j];
    items[i] = b;
    items[j] = a;
    at[`$${b[0]}`] = i;
    at[`$${a[0]}`] = j;
}
