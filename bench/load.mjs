// A closed-loop load generator: `concurrency` producers each post batches back to back,
// resending a batch with the same seq until it is acknowledged (as a real client would).
// Every acknowledgement is recorded with its time and latency.

/** Deterministic pseudo-random numbers so runs are comparable. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A batch of `size` click events over `keys` distinct pages. */
export function makeBatch(random, size, keys, tsMs, keyOf = (i) => `page-${i}`) {
  return Array.from({ length: size }, () => ({ page: keyOf(Math.floor(random() * keys)), ts: tsMs, bytes: Math.floor(random() * 1000) }));
}

/**
 * Runs producers until `stopAt()` is true. `nextBatch(producer, seq)` gives events; each
 * batch is posted to `url + path` (the product's ingest path unless told otherwise).
 * @returns acknowledgements `{ atMs, latencyMs, events, producer, seq, attempts }` and the 503 count.
 */
export async function runLoad({ url, token, stream, concurrency, nextBatch, stopAt, producerPrefix, giveUpAfterMs = 60_000, path = `/v1/streams/${stream}/events` }) {
  const acks = [];
  let rejected = 0;
  const producer = async (index) => {
    const name = `${producerPrefix}-${index}`;
    for (let seq = 1; !stopAt(); seq++) {
      const events = nextBatch(index, seq);
      const body = JSON.stringify(events);
      const started = performance.now();
      for (let attempt = 1; ; attempt++) {
        let status = 0;
        let answer = "";
        try {
          const res = await fetch(url + path, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "flux-producer-id": name, "flux-seq": String(seq) },
            body,
          });
          status = res.status;
          answer = (await res.text()).slice(0, 500);
        } catch {
          status = 0;
        }
        if (status === 200) {
          const now = performance.now();
          acks.push({ atMs: now, latencyMs: now - started, events: events.length, producer: index, seq, attempts: attempt, keys: events.map((e) => e.page) });
          break;
        }
        if (status !== 503 && status !== 0) throw new Error(`unexpected status ${status}: ${answer}`);
        if (performance.now() - started > giveUpAfterMs) throw new Error(`batch ${name}#${seq} not acknowledged within ${giveUpAfterMs} ms`);
        rejected += 1;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => producer(i)));
  return { acks, rejected };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function summarize(acks, durationMs) {
  const events = acks.reduce((n, a) => n + a.events, 0);
  const latencies = acks.map((a) => a.latencyMs).sort((a, b) => a - b);
  return {
    batches: acks.length,
    events,
    eventsPerSecond: events / (durationMs / 1000),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}
