/**
 * Runtime configuration parsed once from Worker vars into `FluxConfig`; defaults live
 * in the schema. Nothing else reads environment variables (STYLE.md §4).
 */
import { z } from "zod";

/** An integer var: a number, or a string of decimal digits (not "", not "0x10", not "1e3"). */
const intFromVar = (defaultValue: number, min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^[0-9]+$/, "must be a decimal integer").transform(Number)])
    .pipe(z.number().int().min(min).max(max))
    .optional()
    .transform((value) => value ?? defaultValue);

/** A decimal var: a number, or a string like "2.5" (not "", not "1e3"). */
const decimalFromVar = (defaultValue: number, min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^[0-9]+(\.[0-9]+)?$/, "must be a decimal number").transform(Number)])
    .pipe(z.number().min(min).max(max))
    .optional()
    .transform((value) => value ?? defaultValue);

/** Records per delivery to a stage's partition at most (a longer backlog goes in the next ones). */
const DELIVERY_RECORDS = 1_000;

/** Durable Object location hints the platform accepts. */
const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "apac-ne", "apac-se", "oc", "afr", "me"] as const;
export type LocationHint = (typeof LOCATION_HINTS)[number];

/**
 * Configuration vars (optional strings in `wrangler.toml` `[vars]`) with their defaults,
 * transformed into the camel-case {@link FluxConfig}.
 */
const FluxConfigSchema = z
  .object({
    /** Largest accepted request body, bytes. */
    FLUX_MAX_BODY_BYTES: intFromVar(1_048_576, 1, 100 * 1_048_576),
    /** Most events in one posted batch. */
    FLUX_MAX_BATCH_EVENTS: intFromVar(10_000, 1, 1_000_000),
    /** Per producer and partition: how far below its highest seq a resend is still recognised. */
    FLUX_DEDUP_WINDOW: intFromVar(1024, 16, 1_000_000),
    /** A replica checkpoints its operator state after this many applied batches. */
    FLUX_CHECKPOINT_EVERY: intFromVar(512, 1, 1_000_000),
    /** How long a router's write to an idle primary may wait for sub-batches of other ingest requests in progress in its isolate, ms (a lone request never waits). */
    FLUX_COALESCE_LINGER_MS: intFromVar(2, 0, 100),
    /** How long a router trusts its cached routing table, ms. */
    FLUX_ROUTING_CACHE_MS: intFromVar(1000, 0, 3_600_000),
    /** How long a router trusts its copy of the revoked token ids, ms: a revocation is enforced everywhere this long after it (issue 26). */
    FLUX_REVOCATION_CACHE_MS: intFromVar(5000, 0, 60_000),
    /** Longest key, characters. */
    FLUX_MAX_KEY_LENGTH: intFromVar(256, 1, 65_536),
    /** The monitor probes every replica of an active dataflow this often, ms. */
    FLUX_HEARTBEAT_MS: intFromVar(500, 10, 86_400_000),
    /**
     * ... but of an active one the data path watches (healthy, no clock ticks: its routers,
     * readers and upstream primaries report every failed or slow call at once) only this often, ms (issue 29).
     */
    FLUX_WATCH_PROBE_MS: intFromVar(10_000, 10, 86_400_000),
    /** ... and of an idle one after as long again as it has been quiet, but at least this often, ms. */
    FLUX_IDLE_PROBE_MS: intFromVar(1_800_000, 10, 86_400_000),
    /** A healthy dataflow without clock ticks is idle once no replica's LSN moved for this long, ms. */
    FLUX_IDLE_AFTER_MS: intFromVar(10_000, 0, 86_400_000),
    /** A probe not answered within this is a miss, ms. */
    FLUX_PROBE_TIMEOUT_MS: intFromVar(250, 1, 60_000),
    /** Consecutive missed probes before a replica is declared failed. */
    FLUX_FAIL_AFTER_MISSES: intFromVar(2, 1, 100),
    /** Missed probes closer together than this count as one, ms (router reports trigger extra probes). */
    FLUX_MISS_SPACING_MS: intFromVar(250, 0, 3_600_000),
    /** A router gives up on a replica call after this, ms, reports it and answers 503. */
    FLUX_REPLICA_TIMEOUT_MS: intFromVar(1000, 1, 60_000),
    /** A router reports a replica call still unanswered after this, ms, while it keeps waiting (the monitor probes at once). */
    FLUX_SUSPECT_MS: intFromVar(150, 1, 60_000),
    /**
     * Online recovery pauses this many times a copy step's time after each step while the
     * survivor takes writes (0: no pauses; a partition taking no writes is never paused).
     */
    FLUX_SEED_PACING: decimalFromVar(2.5, 0, 100),
    /** Comma-separated location hints for replicas (e.g. "wnam,enam,weur"); a fresh replica avoids its survivor's. */
    FLUX_LOCATION_HINTS: z
      .string()
      .optional()
      .transform((value) => (value ?? "").split(",").map((hint) => hint.trim()).filter((hint) => hint !== ""))
      .pipe(z.array(z.enum(LOCATION_HINTS))),
    /** A stage lagging this many results behind an upstream partition makes that partition refuse new batches (503 BACKPRESSURE; issue 27). */
    FLUX_OUTBOX_BOUND: intFromVar(10_000, 1, 1_000_000),
    /** An upstream partition sends a stage a delivery without results (its watermark, or coverage so it can trim) at most this often per edge, ms. */
    FLUX_EXCHANGE_IDLE_MS: intFromVar(100, 0, 3_600_000),
    /** A delivery to a stage that failed or was refused is retried after this, ms. */
    FLUX_EXCHANGE_RETRY_MS: intFromVar(250, 1, 3_600_000),
    /** "true" enables the fault-injection admin endpoint (tests and demos only). */
    FLUX_ENABLE_FAULTS: z.enum(["true", "false"]).optional().transform((value) => value === "true"),
  })
  .transform((vars) => ({
    maxBodyBytes: vars.FLUX_MAX_BODY_BYTES,
    maxBatchEvents: vars.FLUX_MAX_BATCH_EVENTS,
    dedupWindow: vars.FLUX_DEDUP_WINDOW,
    checkpointEvery: vars.FLUX_CHECKPOINT_EVERY,
    coalesceLingerMs: vars.FLUX_COALESCE_LINGER_MS,
    routingCacheMs: vars.FLUX_ROUTING_CACHE_MS,
    revocationCacheMs: vars.FLUX_REVOCATION_CACHE_MS,
    maxKeyLength: vars.FLUX_MAX_KEY_LENGTH,
    heartbeatMs: vars.FLUX_HEARTBEAT_MS,
    watchProbeMs: vars.FLUX_WATCH_PROBE_MS,
    idleProbeMs: vars.FLUX_IDLE_PROBE_MS,
    idleAfterMs: vars.FLUX_IDLE_AFTER_MS,
    probeTimeoutMs: vars.FLUX_PROBE_TIMEOUT_MS,
    failAfterMisses: vars.FLUX_FAIL_AFTER_MISSES,
    replicaTimeoutMs: vars.FLUX_REPLICA_TIMEOUT_MS,
    suspectMs: vars.FLUX_SUSPECT_MS,
    missSpacingMs: vars.FLUX_MISS_SPACING_MS,
    seedPacing: vars.FLUX_SEED_PACING,
    locationHints: vars.FLUX_LOCATION_HINTS,
    enableFaults: vars.FLUX_ENABLE_FAULTS,
    boundOutputs: vars.FLUX_OUTBOX_BOUND,
    idleIntervalMs: vars.FLUX_EXCHANGE_IDLE_MS,
    retryMs: vars.FLUX_EXCHANGE_RETRY_MS,
    maxRecords: DELIVERY_RECORDS,
  }));

/** The parsed configuration passed down the call chain instead of `env`. */
export type FluxConfig = z.output<typeof FluxConfigSchema>;

/**
 * Parses Worker vars into a {@link FluxConfig}. Unknown vars are ignored; a var that is
 * set but invalid throws, so a misconfigured deployment fails loudly instead of guessing.
 */
export function parseFluxConfig(vars: object): FluxConfig {
  return FluxConfigSchema.parse(vars);
}
