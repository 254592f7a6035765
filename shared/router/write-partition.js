/** Sends each batch in a call of its own. */
export function sendAlone(port) {
    return (primary, epoch, batch) => port.write(primary, { epoch, batches: [batch] });
}
/** Runs the protocol for one partition. Transport errors propagate to the caller. */
export async function writePartition(send, route, batch) {
    const { partition, epoch, primary } = route;
    const reply = await send(primary, epoch, batch);
    if (reply.status !== "ok")
        return { status: "refused", partition, replica: primary, refusal: reply };
    const outcome = reply.results[0];
    if (!outcome)
        return { status: "incomplete", partition, replica: primary, reason: "the primary answered no outcome" };
    switch (outcome.status) {
        case "applied":
            return { status: "applied", partition, lsn: outcome.lsn, replicated: outcome.replicated, late: outcome.late };
        case "duplicate":
            return { status: "duplicate", partition, lsn: outcome.lsn, replicated: outcome.replicated, late: 0 };
        case "too-old":
            return { status: "too-old", partition, high: outcome.high };
        case "unconfirmed":
            return { status: "incomplete", partition, replica: primary, reason: outcome.reason };
    }
}
