export class WriteCoalescer {
    #options;
    #lanes = new Map();
    constructor(options) {
        this.#options = options;
    }
    /** How a caller sends its batches: alone or with others for the same primary, through `port` when it makes the call. */
    sendVia(port) {
        return (primary, epoch, batch) => this.#send(port, primary, epoch, batch);
    }
    async #send(port, primary, epoch, batch) {
        const key = `${epoch}:${primary}`;
        let lane = this.#lanes.get(key);
        if (!lane)
            this.#lanes.set(key, (lane = { inFlight: 0, waiting: [], chars: 0 }));
        const me = { batch, outcome: null };
        lane.waiting.push(me);
        lane.chars += batch.records.length;
        for (let waitedMs = 0;; waitedMs += this.#options.pollMs) {
            if (!me.outcome && lane.waiting[0] === me && (lane.inFlight === 0 || this.#isFull(lane)))
                await this.#lead(port, key, lane, primary, epoch);
            if (me.outcome)
                return unwrap(me.outcome);
            if (waitedMs >= this.#options.giveUpMs) {
                lane.waiting = lane.waiting.filter((w) => w !== me);
                throw new Error(`write to ${primary} not sent within ${this.#options.giveUpMs} ms (coalescer)`);
            }
            await this.#options.sleep(this.#options.pollMs);
        }
    }
    #isFull(lane) {
        return lane.waiting.length >= this.#options.maxBatches || lane.chars >= this.#options.maxChars;
    }
    /** Takes the next group (the caller first) and makes its call from the caller's context. */
    async #lead(port, key, lane, primary, epoch) {
        const group = [];
        let chars = 0;
        for (const next of lane.waiting) {
            if (group.length >= this.#options.maxBatches || (group.length > 0 && chars + next.batch.records.length > this.#options.maxChars))
                break;
            group.push(next);
            chars += next.batch.records.length;
        }
        lane.waiting.splice(0, group.length);
        lane.chars -= chars;
        lane.inFlight += 1;
        try {
            const reply = await port.write(primary, { epoch, batches: group.map((w) => w.batch) });
            group.forEach((w, i) => (w.outcome = { reply: reply.status === "ok" ? { status: "ok", results: reply.results.slice(i, i + 1) } : reply }));
        }
        catch (error) {
            for (const w of group)
                w.outcome = { error };
        }
        finally {
            lane.inFlight -= 1;
            if (lane.inFlight === 0 && lane.waiting.length === 0)
                this.#lanes.delete(key);
        }
    }
}
function unwrap(outcome) {
    if ("error" in outcome)
        throw outcome.error;
    return outcome.reply;
}
