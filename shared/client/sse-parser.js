/**
 * An incremental parser for Server-Sent Events (the WHATWG `text/event-stream` rules):
 * text goes in as it arrives, complete events come out. Lines end in LF, CR or CRLF,
 * `:` lines are comments, `data` lines join with LF, and an event ends at a blank line.
 */
/** Feeds text, collects events. */
export class SseParser {
    buffer = "";
    lastId = null;
    event = "";
    data = [];
    pendingCr = false;
    /** Parses a chunk of text. @returns the events it completed */
    push(text) {
        let chunk = text;
        if (this.pendingCr && chunk.startsWith("\n"))
            chunk = chunk.slice(1); // the LF of a CRLF split across chunks
        this.pendingCr = chunk.endsWith("\r");
        this.buffer += chunk;
        const out = [];
        const lines = this.buffer.split(/\r\n|\r|\n/);
        this.buffer = lines.pop() ?? "";
        for (const line of lines) {
            const message = this.line(line);
            if (message)
                out.push(message);
        }
        return out;
    }
    line(line) {
        if (line === "") {
            if (this.data.length === 0) {
                this.event = "";
                return null;
            }
            const message = { event: this.event || "message", data: this.data.join("\n"), id: this.lastId };
            this.event = "";
            this.data = [];
            return message;
        }
        if (line.startsWith(":"))
            return null;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" "))
            value = value.slice(1);
        if (field === "event")
            this.event = value;
        else if (field === "data")
            this.data.push(value);
        else if (field === "id" && !value.includes("\0"))
            this.lastId = value;
        return null;
    }
}
