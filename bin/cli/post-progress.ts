/** The progress bar of `flux post` (cli-progress, on stderr): events acknowledged, events/s this run, last seq. */
import { Presets, SingleBar } from "cli-progress";
import type { ProducerTotals } from "../../shared/client/producer-store.ts";

export class PostProgress {
  private readonly bar: SingleBar | null;
  private readonly total: number;
  private startedAtMs = 0;
  private startEvents = 0;
  private events = 0;

  constructor(totalEvents: number, enabled: boolean) {
    this.total = totalEvents;
    this.bar = enabled
      ? new SingleBar({ format: "{bar} {percentage}% | {value}/{total} events | {rate} events/s | seq {seq}", stream: process.stderr, hideCursor: true }, Presets.shades_classic)
      : null;
  }

  start(totals: ProducerTotals): void {
    this.startedAtMs = Date.now();
    this.startEvents = this.events = totals.events;
    this.bar?.start(this.total, totals.events, { rate: "0", seq: "-" });
  }

  /** One more batch of `events` acknowledged. */
  acked(events: number, seq: number): void {
    this.events += events;
    const seconds = Math.max(0.001, (Date.now() - this.startedAtMs) / 1_000);
    this.bar?.update(this.events, { rate: ((this.events - this.startEvents) / seconds).toFixed(0), seq: String(seq) });
  }

  stop(): void {
    this.bar?.stop();
  }
}
