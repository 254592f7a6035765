import { DataflowListResponseSchema, DataflowResponseSchema, DeleteDataflowResponseSchema, FaultResponseSchema, OperatorListResponseSchema, PutDataflowResponseSchema, PutStreamResponseSchema, StatusResponseSchema, StreamListResponseSchema, StreamResponseSchema, } from "../wire/api.ts";
import { MintTokenRequestSchema, MintTokenResponseSchema } from "../wire/tokens.ts";
import { HttpClient } from "./http.ts";
import { Producer } from "./producer.ts";
import { resultPages } from "./result-pages.ts";
import { subscribe } from "./subscription.ts";
const path = (...parts) => `/v1/${parts.map(encodeURIComponent).join("/")}`;
/** One deployment. Calls that are safe to repeat retry retryable failures (see {@link ConnectionOptions.retry}). */
export class FluxClient {
    http;
    constructor(options) {
        this.http = new HttpClient(options);
    }
    /** Creates a dataflow (`status: "created"`), or confirms an identical one (`"unchanged"`). */
    putDataflow(id, spec) {
        return this.http.json(PutDataflowResponseSchema, "PUT", path("dataflows", id), { body: spec });
    }
    async getDataflow(id) {
        return (await this.http.json(DataflowResponseSchema, "GET", path("dataflows", id))).dataflow;
    }
    async listDataflows() {
        return (await this.http.json(DataflowListResponseSchema, "GET", path("dataflows"))).dataflows;
    }
    /** Deletes a dataflow: `deleted`, or `deleting` while replicas in `pending` still have to confirm. */
    deleteDataflow(id) {
        return this.http.json(DeleteDataflowResponseSchema, "DELETE", path("dataflows", id));
    }
    /** Declares (or replaces) a stream's event schema. */
    putStream(name, schema) {
        return this.http.json(PutStreamResponseSchema, "PUT", path("streams", name), { body: schema });
    }
    async getStream(name) {
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
    fault(replica, kind) {
        return this.http.json(FaultResponseSchema, "POST", path("admin", "replicas", replica, "fault"), { auth: "admin", body: { kind } });
    }
    /** Mints a scoped, expiring token (admin token): ingest into `streams`, read `dataflows`, or admin; at most a day. */
    mintToken(request) {
        return this.http.json(MintTokenResponseSchema, "POST", path("admin", "tokens"), { auth: "admin", body: MintTokenRequestSchema.parse(request) });
    }
    /** Result pages of a dataflow, following `next`. */
    results(dataflow, query = {}) {
        return resultPages(this.http, dataflow, query);
    }
    /** Closed windows live, resuming from the last cursor across disconnects and fail-overs. */
    subscribe(dataflow, options = {}) {
        return subscribe(this.http, dataflow, options);
    }
    /** Opens an idempotent producer for one stream (resending a batch its store still holds). */
    producer(options) {
        return Producer.open(this.http, options);
    }
}
