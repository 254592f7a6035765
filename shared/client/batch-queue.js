/**
 * The producer's bounded in-memory queue (pure): events waiting for a batch, with their
 * UTF-8 size, and the rule that cuts the next batch by count, bytes or linger time.
 */
/** UTF-8 length of a string, without encoding it. */
export function utf8Length(text) {
    let bytes = 0;
    for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c < 0x80)
            bytes += 1;
        else if (c < 0x800)
            bytes += 2;
        else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
            bytes += 4; // a surrogate pair is one 4-byte character
            i++;
        }
        else
            bytes += 3;
    }
    return bytes;
}
/** Queued events, oldest first. */
export class BatchQueue {
    events = [];
    head = 0;
    queuedBytes = 0;
    /** When the oldest queued event was added, ms (null when empty). */
    firstAtMs = null;
    get length() {
        return this.events.length - this.head;
    }
    /** Adds one event (as JSON text) with the caller's tag. */
    push(json, tag, nowMs) {
        const bytes = utf8Length(json);
        this.events.push({ json, bytes, tag, atMs: nowMs });
        this.queuedBytes += bytes + 1;
        if (this.firstAtMs === null)
            this.firstAtMs = nowMs;
    }
    /**
     * How long until a batch should be cut, ms: 0 when one is full or `force` (flush, close,
     * page hidden) is set and something is queued; Infinity when the queue is empty.
     */
    dueInMs(limits, nowMs, force) {
        if (this.length === 0)
            return Infinity;
        if (force || this.length >= limits.maxBatchEvents || this.queuedBytes + 1 >= limits.maxBatchBytes)
            return 0;
        return Math.max(0, (this.firstAtMs ?? nowMs) + limits.lingerMs - nowMs);
    }
    /** Takes the next batch: as many events as fit the limits, at least one. */
    cut(limits) {
        const events = [];
        let bytes = 2; // the array's brackets
        let tag;
        while (this.length > 0 && events.length < limits.maxBatchEvents) {
            const next = this.events[this.head]; // length > 0, so head is in range
            if (events.length > 0 && bytes + next.bytes + 1 > limits.maxBatchBytes)
                break;
            events.push(next.json);
            bytes += next.bytes + 1;
            tag = next.tag;
            this.queuedBytes -= next.bytes + 1;
            this.head++;
        }
        if (this.head > 1024 && this.head * 2 > this.events.length) {
            this.events = this.events.slice(this.head);
            this.head = 0;
        }
        this.firstAtMs = this.events[this.head]?.atMs ?? null;
        return { events, tag };
    }
}
