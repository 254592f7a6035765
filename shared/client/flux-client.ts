/**
 * The Flux client: typed calls for every endpoint (answers parsed with the API's own zod
 * schemas), results pages, self-resuming subscriptions and idempotent producers. Pure: the
 * platform comes in as `runtime` (`client/runtime.ts` builds the default one).
 */
import * as z from "zod";
import { describeIssues } from "../http/describe-issues.ts";
import { invalidRequest } from "./client-error.ts";
import {
  DataflowListResponseSchema,
  DataflowResponseSchema,
  DeleteDataflowResponseSchema,
  FaultResponseSchema,
  OperatorListResponseSchema,
  PutDataflowResponseSchema,
  PutStreamResponseSchema,
  StatusResponseSchema,
  StreamListResponseSchema,
  StreamResponseSchema,
} from "../wire/api.ts";
import type { FaultKind } from "../wire/admin.ts";
import type { StoredDataflowSpecSchema } from "../wire/dataflow-spec.ts";
import type { StreamSchemaSchema } from "../wire/stream-schema.ts";
import { MintTokenRequestSchema, MintTokenResponseSchema, RevokeTokenResponseSchema, TokenIdSchema, type MintTokenRequest } from "../wire/tokens.ts";
import { HttpClient, type ConnectionOptions } from "./http.ts";
import { Producer } from "./producer.ts";
import type { ProducerOptions } from "./producer-options.ts";
import { resultPages, type ResultsQuery } from "./result-pages.ts";
import { subscribe, type SubscribeOptions } from "./subscription.ts";

/** A dataflow spec as `PUT /v1/dataflows/{id}` accepts it (defaults may be left out). */
export type DataflowSpecInput = z.input<typeof StoredDataflowSpecSchema>;
/** A stream declaration as `PUT /v1/streams/{stream}` accepts it. */
export type StreamSchemaInput = z.input<typeof StreamSchemaSchema>;

const path = (...parts: string[]) => `/v1/${parts.map(encodeURIComponent).join("/")}`;

/** One deployment. Calls that are safe to repeat retry retryable failures (see {@link ConnectionOptions.retry}). */
export class FluxClient {
  readonly http: HttpClient;

  constructor(options: ConnectionOptions) {
    this.http = new HttpClient(options);
  }

  /** Creates a dataflow (`status: "created"`), confirms an identical one (`"unchanged"`), or grows one whose spec differs only in a higher partition count (`"rescaling"`). */
  putDataflow(id: string, spec: DataflowSpecInput) {
    return this.http.json(PutDataflowResponseSchema, "PUT", path("dataflows", id), { body: spec });
  }

  async getDataflow(id: string) {
    return (await this.http.json(DataflowResponseSchema, "GET", path("dataflows", id))).dataflow;
  }

  async listDataflows() {
    return (await this.http.json(DataflowListResponseSchema, "GET", path("dataflows"))).dataflows;
  }

  /** Deletes a dataflow: `deleted`, or `deleting` while replicas in `pending` still have to confirm. */
  deleteDataflow(id: string) {
    return this.http.json(DeleteDataflowResponseSchema, "DELETE", path("dataflows", id));
  }

  /** Declares (or replaces) a stream's event schema. */
  putStream(name: string, schema: StreamSchemaInput) {
    return this.http.json(PutStreamResponseSchema, "PUT", path("streams", name), { body: schema });
  }

  async getStream(name: string) {
    return (await this.http.json(StreamResponseSchema, "GET", path("streams", name))).stream;
  }

  async listStreams() {
    return (await this.http.json(StreamListResponseSchema, "GET", path("streams"))).streams;
  }

  async operators() {
    return (await this.http.json(OperatorListResponseSchema, "GET", path("operators"))).operators;
  }

  /** Partitions, replicas, roles, epochs, LSNs, lag and recent fail-overs of every dataflow. */
  status() {
    return this.http.json(StatusResponseSchema, "GET", path("status"));
  }

  /** Injects a fault into a replica (admin token; only where `FLUX_ENABLE_FAULTS` is on). */
  fault(replica: string, kind: FaultKind) {
    return this.http.json(FaultResponseSchema, "POST", path("admin", "replicas", replica, "fault"), { auth: "admin", body: { kind } });
  }

  /** Mints a scoped, expiring token (admin token): ingest into `streams`, read `dataflows`, or admin; at most a day. */
  mintToken(request: MintTokenRequest) {
    const checked = MintTokenRequestSchema.safeParse(request);
    if (!checked.success) {
      const why = describeIssues(checked.error.issues, request, [], "(request)").join("; ");
      return Promise.reject(invalidRequest(`invalid token request (not sent): ${why}`, z.treeifyError(checked.error)));
    }
    return this.http.json(MintTokenResponseSchema, "POST", path("admin", "tokens"), { auth: "admin", body: checked.data });
  }

  /**
   * Revokes a minted token by the `id` its mint answer named (admin token): refused by every
   * router from `effectiveEverywhereAtMs` on; revoking again answers `already-revoked`.
   */
  revokeToken(id: string) {
    if (!TokenIdSchema.safeParse(id).success) return Promise.reject(invalidRequest(`invalid token id (not sent): '${id}' is not 16 base64url characters`));
    return this.http.json(RevokeTokenResponseSchema, "POST", path("admin", "tokens", id, "revoke"), { auth: "admin" });
  }

  /** Result pages of a dataflow, following `next`. */
  results(dataflow: string, query: ResultsQuery = {}) {
    return resultPages(this.http, dataflow, query);
  }

  /** Closed windows live, resuming from the last cursor across disconnects and fail-overs. */
  subscribe(dataflow: string, options: SubscribeOptions = {}) {
    return subscribe(this.http, dataflow, options);
  }

  /** Opens an idempotent producer for one stream (resending a batch its store still holds). */
  producer(options: ProducerOptions): Promise<Producer> {
    return Producer.open(this.http, options);
  }
}
