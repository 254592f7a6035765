/** Forwards (first one plus gap fills) per round before the round counts as failed. */
const MAX_FORWARDS_PER_ROUND = 8;
/** Log entries sent per gap fill (a standby far behind is caught up in pages). */
const GAP_PAGE = 200;
/** Record characters per forward at most (well under the RPC size limit); the rest goes in the next. */
const MAX_FORWARD_CHARS = 4000000;
export class Forwarder {
    #port;
    #link;
    #waiters = [];
    #busy = false;
    constructor(port, link) {
        this.#port = port;
        this.#link = link;
    }
    /** Resolves once the entry at `lsn` is applied and (with a standby) held by it; rejects if a forward fails first. */
    waitStable(lsn) {
        const promise = new Promise((resolve, reject) => this.#waiters.push({ lsn, resolve, reject }));
        this.settle();
        if (this.#waiters.length > 0)
            void this.#pump(); // its failures reject the waiters
        return promise;
    }
    /** Answers every waiter whose entry is now stable; `late` holds late counts of entries just applied. */
    settle(late) {
        const view = this.#link.view();
        if (!view)
            return this.fail("the replica is no longer primary or restarted");
        this.#waiters = this.#waiters.filter((w) => {
            const stable = view.appliedLsn >= w.lsn && (!view.hasStandby || view.standbyAckLsn >= w.lsn);
            if (stable)
                w.resolve({ replicated: view.hasStandby, late: late?.get(w.lsn) ?? 0 });
            return !stable;
        });
    }
    /** Fails every waiter: their entries stay pending until a later forward carries them. */
    fail(reason) {
        for (const w of this.#waiters.splice(0))
            w.reject(new Error(reason));
    }
    async #pump() {
        if (this.#busy)
            return;
        this.#busy = true;
        try {
            for (let view = this.#link.view(); view?.hasStandby && this.#waiters.length > 0; view = this.#link.view()) {
                if (view.standby === null)
                    throw new Error("the primary does not know its standby yet (the monitor reconfigures it)");
                const held = await this.#forward(view, view.standby);
                this.#link.acked(view.epoch, view.standby, held);
            }
        }
        catch (err) {
            this.fail(err instanceof Error ? err.message : String(err));
        }
        finally {
            this.#busy = false;
        }
    }
    /** One round: the pending entries, then pages from the log for any gap. @returns the standby's LSN. */
    async #forward(view, standby) {
        const { epoch } = view;
        const unacked = view.pending.filter((e) => e.lsn > view.standbyAckLsn);
        let entries = boundedByChars(unacked);
        // A bounded forward asks only for what it carries; the loop in #pump sends the rest next.
        const upToLsn = entries.length < unacked.length ? (entries[entries.length - 1]?.lsn ?? view.lsn) : view.lsn;
        for (let sent = 0; sent < MAX_FORWARDS_PER_ROUND; sent++) {
            const reply = await this.#port.replicate(standby, { epoch, entries, upToLsn });
            if (reply.status === "ok")
                return reply.lsn;
            if (reply.status !== "gap")
                throw new Error(`standby ${standby} refused the forward at epoch ${epoch}: ${reply.status}`);
            entries = this.#link.readLog(reply.lsn + 1, Math.min(upToLsn, reply.lsn + GAP_PAGE));
            if (entries[0]?.lsn !== reply.lsn + 1)
                throw new Error(`standby ${standby} needs LSN ${reply.lsn + 1}, which the log no longer holds`);
        }
        throw new Error(`standby ${standby} is still behind LSN ${upToLsn} after ${MAX_FORWARDS_PER_ROUND} forwards`);
    }
}
/** The longest prefix of `entries` within {@link MAX_FORWARD_CHARS} (at least one entry). */
function boundedByChars(entries) {
    let chars = 0;
    for (let i = 0; i < entries.length; i++) {
        chars += entries[i]?.records.length ?? 0;
        if (chars > MAX_FORWARD_CHARS && i > 0)
            return entries.slice(0, i);
    }
    return entries;
}
