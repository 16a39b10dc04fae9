import type { FieldDef } from './catalog.js';
/**
 * Public contracts of the bundled workspace simulator. Deliberately independent of src/api: the
 * simulator is a second reading of the upstream API (docs/upstream.md), so the two sides catch each other's mistakes.
 */

export interface SimulatorOptions {
  /** Interface to listen on. Default `'127.0.0.1'`. */
  host?: string;
  /** Port to listen on. Default `0` (an ephemeral port; read it back from `Simulator.port`). */
  port?: number;
  /** API key -> member user id. Default `{ 'test-key': <first generated member id> }`. Unknown member ids become extra members named "API user". */
  apiKeys?: Record<string, string>;
  /** Seed of every pseudo-random choice (data, activity, faults). Default `1`. */
  seed?: number;
  /** Generated tickets. Default `50`. */
  tickets?: number;
  /** Generated deals. Default `20`. */
  deals?: number;
  /** Generated pipelines. Default `2`. */
  pipelines?: number;
  /** Generated agents (workspace members). Default `8`. */
  members?: number;
  /** Random writes per second, performed through the same code paths as the HTTP handlers. Default `0`. */
  activity?: number;
  /** Serve the HTTP control surface under `/_control`. Default `false`. */
  control?: boolean;
  /** Workspace setting: a public reply assigns the key's member to an unassigned ticket. Default `true`. */
  autoAssignOnReply?: boolean;
  /** Automation: solved tickets are closed (actor null) after this much simulated time. Default 4 days; `0` disables. */
  autoCloseSolvedAfterMs?: number;
  /** Initial fault configuration, merged over the defaults of `FaultConfig`. Default: no faults. */
  faults?: Partial<FaultConfig>;
  /** Start of the simulated clock. Default: the real current time. Seeded history lies before it. */
  startTime?: Date;
  /**
   * Whether the simulated clock runs with real time. Default `true`; `false` moves it only by
   * `control.advanceClock`, for tests whose outcome must not depend on how fast the machine is.
   */
  realTime?: boolean;
  /**
   * How the simulated workspace spells what the upstream leaves open (see `DialectOptions`),
   * merged over the defaults. Default: today's spelling (`SIMULATOR_DIALECTS.default`), or the
   * preset named by the environment variable `WSMIRROR_SIMULATOR_DIALECT` when this is not given.
   */
  dialect?: Partial<DialectOptions>;
}

/** The simulator's own record kinds, spelled apart from the client's registry (src/entities), which it never imports. */
export const SIM_RECORD_KINDS = ['ticket', 'deal'] as const;
export type SimRecordKind = (typeof SIM_RECORD_KINDS)[number];

/**
 * A workspace's choices where the upstream is silent (docs/upstream.md). Every option has a default that
 * is the simulator's original behaviour; docs/simulator.md ("Dialects") describes each one.
 * `changeEvents`, `opaquePayload`, `changeFieldNames`, `changeValues` and `unlistedValues` shape
 * what is logged and generated from then on (the change log is history); `timestamps`, `listEnd`,
 * `extraFields` and `teamShape` shape every answer at once.
 */
export interface DialectOptions {
  /**
   * How a field change is logged: `'dedicated'` (`ticket.status_changed`, `ticket.priority_changed`,
   * `ticket.assigned`, `deal.stage_changed` with `{from, to}`, and `<entity>.updated` with
   * `{<field>: {from, to}}` for the other fields), `'updated'` (every change of one write in ONE
   * `<entity>.updated` event, `{<field>: {from, to}, ...}`) or `'opaque'` (one `<entity>.updated`
   * per write naming the changed fields without from/to). Default `'dedicated'`.
   */
  changeEvents: 'dedicated' | 'updated' | 'opaque';
  /**
   * Payload of an opaque change: `'summary'` (`{"summary": "Status and priority updated"}`) or
   * `'changed'` (`{"changed": ["status", "priority"]}`, names per `changeFieldNames`). Default `'summary'`.
   */
  opaquePayload: 'summary' | 'changed';
  /**
   * Field names in change payloads: `'apiId'` (`assigneeId`, `teamId`, `stageId`, `ownerId`,
   * `companyId`, `contactIds`, `closeDate`), `'api'` (`assignee`, `team`, `stage`, `owner`,
   * `company`, `contacts`, `closeDate`) or `'snake'` (`assignee_id`, `team_id`, `stage_id`,
   * `owner_id`, `company_id`, `contact_ids`, `close_date`). Default `'apiId'`.
   */
  changeFieldNames: 'apiId' | 'api' | 'snake';
  /**
   * Values of `from`/`to` for reference fields (assignee, team, stage, owner, company, contacts):
   * `'ids'` or `'refs'` (`{id, name}` objects; null stays null). Default `'ids'`.
   */
  changeValues: 'ids' | 'refs';
  /**
   * Form of every timestamp the API emits: `'ms-z'` (`2026-01-02T03:04:05.678Z`), `'s-z'`
   * (`...05Z`), `'ms-offset'` (`...05.678+00:00`) or `'s-offset'` (`...05+00:00`). Second forms
   * show the instant truncated to the second. Default `'ms-z'`.
   */
  timestamps: 'ms-z' | 's-z' | 'ms-offset' | 's-offset';
  /** `nextCursor` of the last page of a list: `'null'`, `'empty'` (`""`) or `'absent'` (no key). Default `'null'`. */
  listEnd: 'null' | 'empty' | 'absent';
  /** Unknown extra fields on every object the API returns (records, refs, messages, stages, pipelines, events, envelopes). Default `false`. */
  extraFields: boolean;
  /** Status, priority and message author types docs/upstream.md never lists, in data and activity. Default `false`. */
  unlistedValues: boolean;
  /** Team objects: `'plain'` (`{id, name}`) or `'rich'` (`{id, name, email, memberCount, lead: {id, name}}`). Default `'plain'`. */
  teamShape: 'plain' | 'rich';
  /**
   * How the ticket and deal lists page: `'keyset'` (a cursor holds the last item's place in a
   * snapshot of the list taken at its first page: no gaps, no repeats) or `'offset'` (a cursor
   * holds a position in the list as it is when the next page is asked: a record leaving a page
   * already served moves every later record one place forward, and the one at the page boundary
   * is never served). Default `'keyset'`.
   */
  listPaging: 'keyset' | 'offset';
}

export interface Simulator {
  /** Base address without trailing slash and without `/api/v1`, e.g. `http://127.0.0.1:43127`. */
  url: string;
  port: number;
  /** In-process control handle; the HTTP control surface maps onto the same object. */
  control: SimulatorControl;
  /** Stops activity and timers, closes the server and every open socket. */
  close(): Promise<void>;
}

export interface FaultConfig {
  /** Added to every API response. Default `0`. */
  latencyMs: number;
  /** Fraction (0..1) of API requests answered 500/502/503 with a JSON error body. Default `0`. */
  errorRate: number;
  /** Fraction answered 429 with `Retry-After`. Default `0`. */
  rateLimitRate: number;
  /** `Retry-After` value on 429. Default `1`. */
  retryAfterSeconds: number;
  /** Form of `Retry-After`. Default `'seconds'`. */
  retryAfterFormat: 'seconds' | 'http-date';
  /** Fraction of requests whose socket is destroyed without a response. Default `0`. */
  dropRate: number;
  /** Fraction of GET /tickets/:id and /deals/:id served from the version before the last write. Default `0`. */
  staleReadRate: number;
  /** Fraction of new events visible only `lateEventDelayMs` after their occurredAt. Default `0`. */
  lateEventRate: number;
  /** Default `5000`. */
  lateEventDelayMs: number;
  /** Cursors older than this (simulated time) are rejected with 410. Default `0` = never expire. */
  cursorTtlMs: number;
  /** When non-empty, faults apply only to paths starting with one of these. Default `[]`. */
  paths: string[];
  /** Token-bucket rate limit: requests per second refilled; `0` = no limit. Default `0`. */
  rateLimitPerSecond: number;
  /** Size of the bucket (the burst allowed); `0` = one second's worth. Default `0`. */
  rateLimitBurst: number;
  /**
   * Rate-limit headers sent while the bucket is on: `'all'` (`RateLimit-*` with `RateLimit-Policy`,
   * and `X-RateLimit-*`), `'no-policy'` (the same without `RateLimit-Policy`) or `'none'`. Default `'all'`.
   */
  rateLimitHeaders: 'all' | 'no-policy' | 'none';
  /**
   * The `Date` header of API answers: `'clock'` (the simulated clock, to the second, as HTTP dates
   * are), `'none'` (no `Date` header) or `'invalid'` (a value that is not a date). Default `'clock'`.
   */
  dateHeader: 'clock' | 'none' | 'invalid';
  /** Added to the simulated clock in the `Date` header only (negative: behind); events keep their times. Default `0`. */
  dateSkewMs: number;
  /**
   * Order of the events within each change-log page: `'newest-first'` (the API's documented order)
   * or `'oldest-first'` (each page reversed; pages and cursors unchanged). Default `'newest-first'`.
   */
  eventPageOrder: 'newest-first' | 'oldest-first';
  /**
   * On the Nth page request of a ticket or deal listing (N = this value; `0` = off), before that
   * page is computed, `removeServedCount` records that earlier pages of the listing served leave
   * the list through the simulator's own writes (tickets deleted, marked spam or merged in turn,
   * deals deleted), logged as those writes are. Fires once per list kind, then is spent; setting
   * any fault re-arms it. Default `0`.
   */
  removeServedAtPage: number;
  /** How many served records `removeServedAtPage` removes (fewer when fewer were served). Default `3`. */
  removeServedCount: number;
}

export interface FailNextRule {
  status: number;
  /** Matching requests to fail. Default `1`. */
  count?: number;
  /** Path prefix to match, e.g. `/api/v1/events`. Default: any API path. */
  path?: string;
  /** HTTP method to match. Default: any. */
  method?: string;
  /** Value of the `Retry-After` header, sent as given. */
  retryAfter?: string;
  /** Destroy the socket instead of answering. */
  drop?: boolean;
}

export type HideReason = 'spam' | 'deleted' | 'merged';
export type CorruptionKind = 'bad-timestamp' | 'missing-field' | 'wrong-type';

export interface InjectedEvent {
  type: string;
  entityType: string;
  entityId: string;
  payload?: object;
  actor?: object | null;
  occurredAt?: string;
  visibleAfterMs?: number;
}

export interface SimulatorControl {
  truth(): Truth;
  setFaults(f: Partial<FaultConfig>): void;
  clearFaults(): void;
  failNext(rule: FailNextRule): void;
  requests(): RequestLogEntry[];
  clearRequests(): void;
  /**
   * In-process only: `listener` runs as each API request arrives, before its latency and answer.
   * Returns the unsubscribe function.
   */
  onRequest(listener: (e: Readonly<RequestLogEntry>) => void): () => void;
  now(): Date;
  advanceClock(ms: number): void;
  hideTicket(id: string, reason: HideReason): void;
  corrupt(entityType: SimRecordKind, id: string, how?: CorruptionKind): void;
  repair(entityType: SimRecordKind, id: string): void;
  act(count?: number): ActivityRecord[];
  actEveryKind(): ActivityRecord[];
  burst(count: number): void;
  injectEvent(e: InjectedEvent): string;
  expireCursors(): void;
  removeMessage(ticketId: string, messageId: string): void;
  /**
   * Adds a custom field definition, or replaces the one of the same key (an admin changing its
   * type): writes validate against it from then on; stored values stay as they are.
   */
  defineCustomField(entityType: SimRecordKind, def: FieldDef): void;
  /** The dialect now in force. */
  dialect(): DialectOptions;
  /** Merges `patch` over the dialect now in force (an unknown key or value throws a TypeError) and returns the result. */
  setDialect(patch: Partial<DialectOptions>): DialectOptions;
}

/**
 * What a perfect mirror holds, in one canonical spelling whatever the dialect: timestamps in the
 * `ms-z` form (of the instant the API shows, so truncated to the second under a second dialect),
 * plain `{id, name}` teams and no extra fields. Values (including unlisted statuses) and the
 * change log's types and payloads are as the API serves them.
 */
export interface Truth {
  /** Every listed ticket, as GET /tickets/:id returns it (with messages), newest-updated first. */
  tickets: object[];
  hiddenTickets: { id: string; reason: string }[];
  /** Every existing deal as GET /deals/:id returns it, newest-updated first. */
  deals: object[];
  deletedDealIds: string[];
  pipelines: object[];
  /** Every event visible now, newest first. */
  events: object[];
  /** Every field change told by a visible event, newest first, in one form whatever the dialect. */
  changes: TruthChange[];
  members: object[];
  /** The dialect in force. */
  dialect: DialectOptions;
}

/**
 * One field change of the change log, dialect-free: `field` is `status`, `priority`, `assigneeId`,
 * `teamId`, `subject`, `summary`, `tags`, `fields.<key>` (tickets) or `name`, `amount`, `currency`,
 * `closeDate`, `stageId`, `ownerId`, `companyId`, `contactIds`, `fields.<key>` (deals); `from` and
 * `to` are ids or scalar values. Present even when the event that logged it does not show them
 * (the `opaque` dialect). Injected events tell no changes.
 */
export interface TruthChange {
  eventId: string;
  entityType: SimRecordKind;
  entityId: string;
  field: string;
  from: unknown;
  to: unknown;
  occurredAt: string;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  query: Record<string, string>;
  /** 0 when the socket was dropped. */
  status: number;
  startedAt: string;
  durationMs: number;
  authorized: boolean;
}

export interface ActivityRecord {
  kind: string;
  entityType: string;
  entityId: string;
  /**
   * The record's `updatedAt` once the write is made (canonical ISO, the simulator's clock): what a
   * mirror holding the write shows, so a harness compares with it instead of guessing the
   * simulator's time from its own clock.
   */
  updatedAt: string;
}

export interface ApiRequest {
  method: string;
  /** Path segments after /api/v1, URL-decoded. */
  segments: string[];
  query: Record<string, string>;
  /** Parsed JSON body (undefined when empty). */
  body: unknown;
  /** Member id of the API key. */
  actor: string;
  /** Serve the previous version of a single record, or of every item of a list page (stale-read fault). */
  stale: boolean;
  /** Serve change-log pages oldest first (the `eventPageOrder` fault). */
  oldestFirst: boolean;
}

export interface ApiResponse {
  status: number;
  body: string | Buffer;
}
