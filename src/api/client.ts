import { setMaxListeners } from 'node:events';
import { Agent } from 'undici';
import { WsmirrorError } from '../util/errors.js';
import {
  ApiError,
  AuthRejectedError,
  InvalidRecordError,
  InvalidResponseError,
  NotFoundError,
  NotWorkspaceApiError,
  UpstreamRejectedError,
  type ApiErrorDetails,
} from './errors.js';
import { quote } from './json-bounds.js';
import { createPacer } from './adaptive-rate.js';
import { realClock, Semaphore, type Clock, type Pacer } from './limiter.js';
import { resolveOptions, type ApiClientOptions, type ClientStats, type ResolvedOptions } from './options.js';
import { PagingGuard } from './paging.js';
import { unsafePathSegment } from './path-ids.js';
import { SecretRedactor } from '../util/redact.js';
import { DEAL_LIST, DEAL_READ, EVENT_LIST, pipelineSchema, TICKET_LIST, TICKET_READ } from './schemas.js';
import { shownPath, Transport, toQueryString } from './transport.js';
import type { Deal, InvalidItem, ListSource, Page, Pipeline, RecordSource, Ticket, TicketWithMessages, WorkspaceEvent } from './types.js';
import { validateItems, validateRecord } from './validate.js';

export interface CallOptions {
  /** Aborts this call (in flight or waiting); the client-wide signal applies as well. */
  signal?: AbortSignal;
}

export interface EventsQuery {
  since?: string;
  cursor?: string | null;
  limit?: number;
  type?: string;
  entityType?: string;
  entityId?: string;
}

export interface TicketsQuery {
  cursor?: string | null;
  limit?: number;
  status?: string;
  [filter: string]: unknown;
}

export interface DealsQuery {
  cursor?: string | null;
  limit?: number;
  [filter: string]: unknown;
}

/** A page of any list: its cursor, its size and the list's own filters. */
export interface ListQuery {
  cursor?: string | null;
  limit?: number;
  [filter: string]: unknown;
}

export interface ApiClient {
  /** One page of the list `source` names (src/entities): what the engine reads any entity's list with. */
  listPage<T>(source: ListSource<T>, q: ListQuery, opts?: CallOptions): Promise<Page<T>>;
  /** Pages (not items) of that list from `q.cursor` (or the start) until the last page. */
  iterateList<T>(source: ListSource<T>, q?: ListQuery, opts?: CallOptions): AsyncIterable<Page<T>>;
  /** The record `id` as `source` names it. Throws NotFoundError on 404, InvalidRecordError when it fails validation. */
  readRecord<T>(source: RecordSource<T>, id: string, opts?: CallOptions): Promise<T>;
  eventsPage(q: EventsQuery, opts?: CallOptions): Promise<Page<WorkspaceEvent>>;
  ticketsPage(q: TicketsQuery, opts?: CallOptions): Promise<Page<Ticket>>;
  dealsPage(q: DealsQuery, opts?: CallOptions): Promise<Page<Deal>>;
  /** Pages (not items) from `q.cursor` (or the start) until the last page (`nextCursor` null, "" or absent). */
  iterateEvents(q: EventsQuery, opts?: CallOptions): AsyncIterable<Page<WorkspaceEvent>>;
  iterateTickets(q?: TicketsQuery, opts?: CallOptions): AsyncIterable<Page<Ticket>>;
  iterateDeals(q?: DealsQuery, opts?: CallOptions): AsyncIterable<Page<Deal>>;
  /** Throws NotFoundError on 404, InvalidRecordError when the ticket or any message fails validation. */
  getTicket(id: string, opts?: CallOptions): Promise<TicketWithMessages>;
  getDeal(id: string, opts?: CallOptions): Promise<Deal>;
  /** `serverDate`: the answer's `Date` header (ISO), null when absent or not a date; the sync bounds its next window by it. */
  listPipelines(opts?: CallOptions): Promise<{ items: Pipeline[]; invalid: InvalidItem[]; serverDate: string | null }>;
  /** A snapshot; counters only grow. */
  stats(): ClientStats;
  /** Aborts pending calls and waits (they reject with code CLIENT_CLOSED), then closes the pool. */
  close(): Promise<void>;
}

/** Test seams: fake time and randomness. Not part of the public options. */
export interface ClientInternals {
  clock?: Clock;
  random?: () => number;
}

type EntityType = InvalidItem['entityType'];

export function createApiClient(options: ApiClientOptions, internals: ClientInternals = {}): ApiClient {
  const io = openTransport(options, internals);
  const { transport, agent, ownsAgent, lifetime } = io;
  const client: ApiClient = {
    listPage: (source, q, o) => page(io, source, q, o?.signal),
    iterateList: (source, q = {}, o) => iterate(io, q, (p) => client.listPage(source, p, o), source.path),
    readRecord: (source, id, o) => single(io, source, id, o?.signal),
    eventsPage: (q, o) => client.listPage(EVENT_LIST, { ...q }, o),
    ticketsPage: (q, o) => client.listPage(TICKET_LIST, q, o),
    dealsPage: (q, o) => client.listPage(DEAL_LIST, q, o),
    iterateEvents: (q, o) => client.iterateList(EVENT_LIST, { ...q }, o),
    iterateTickets: (q = {}, o) => client.iterateList(TICKET_LIST, q, o),
    iterateDeals: (q = {}, o) => client.iterateList(DEAL_LIST, q, o),
    getTicket: (id, o) => client.readRecord(TICKET_READ, id, o),
    getDeal: (id, o) => client.readRecord(DEAL_READ, id, o),
    listPipelines: (o) => pipelines(io, o?.signal),
    stats: () => ({ ...transport.stats, byStatus: { ...transport.stats.byStatus }, ratePerSecond: io.pacer.rate }),
    async close() {
      if (lifetime.signal.aborted) return;
      lifetime.abort(new WsmirrorError('CLIENT_CLOSED', 'The API client was closed while a request was pending.'));
      if (ownsAgent) await agent.close();
    },
  };
  return client;
}

/** What every call of one client shares; `lifetime` and `agent` are what close() ends. */
interface ClientIo {
  opts: ResolvedOptions;
  transport: Transport;
  agent: Agent;
  /** False for a shared agent (options.agent): close() leaves it open. */
  ownsAgent: boolean;
  lifetime: AbortController;
  pacer: Pacer;
}

function openTransport(options: ApiClientOptions, internals: ClientInternals): ClientIo {
  const opts = resolveOptions(options);
  const clock = internals.clock ?? realClock;
  // close() must also end retry waits and queued calls, not only the sockets.
  const lifetime = new AbortController();
  const clientSignal = options.signal === undefined ? lifetime.signal : AbortSignal.any([options.signal, lifetime.signal]);
  // Every queued or waiting call listens to this signal (and removes its listener when done), so
  // hundreds of pending getTicket calls are normal, not a leak.
  setMaxListeners(0, clientSignal);
  const agent =
    options.agent ??
    new Agent({
      connections: opts.concurrency,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.requestTimeoutMs,
      bodyTimeout: opts.requestTimeoutMs,
    });
  const pacer = createPacer(opts.maxRequestsPerSecond, opts.maxRequestsPerSecondCeiling, opts.maxDelayMs, clock, opts.startRatePerSecond);
  const transport = new Transport({
    opts,
    agent,
    clock,
    limiter: pacer,
    semaphore: new Semaphore(opts.concurrency),
    redactor: new SecretRedactor(opts.apiKey),
    signal: clientSignal,
    logger: options.logger,
    onRequest: options.onRequest,
    random: internals.random,
  });
  return { opts, transport, agent, ownsAgent: options.agent === undefined, lifetime, pacer };
}

async function page<T>(
  { opts, transport }: ClientIo,
  { path, key, entityType, schema }: ListSource<T>,
  q: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Page<T>> {
  const query = { ...q, limit: q.limit ?? opts.pageSize, cursor: q.cursor ?? undefined };
  const { json, serverDate } = await transport.getJson(path, query, signal).catch((err: unknown) => {
    throw query.cursor === undefined ? notTheApi(err) : err;
  });
  const where = { method: 'GET', path: shownPath(opts.basePath + path + toQueryString(query)) };
  const envelope = json as Record<string, unknown> | null;
  const items = envelope !== null && typeof envelope === 'object' ? envelope[key] : undefined;
  if (!Array.isArray(items))
    throw new InvalidResponseError(`expected {"${key}": [...]} but "${key}" is not an array`, { ...where, status: 200 });
  // The document shows the last page as `nextCursor: null`; a server may as well send "" or leave
  // the key out (docs/sync.md, "Where the upstream is silent"): all three end the listing.
  const next = envelope?.nextCursor;
  if (next !== undefined && next !== null && typeof next !== 'string') {
    throw new InvalidResponseError('"nextCursor" is neither a string, null nor absent', { ...where, status: 200 });
  }
  return { ...validateItems(entityType, schema, items), nextCursor: next === undefined || next === '' ? null : next, serverDate };
}

async function* iterate<T>(
  { opts }: ClientIo,
  first: Record<string, unknown>,
  fetchPage: (q: Record<string, unknown>) => Promise<Page<T>>,
  path: string,
): AsyncIterable<Page<T>> {
  let cursor = (first.cursor as string | null | undefined) ?? null;
  const guard = new PagingGuard(opts.basePath + path);
  if (cursor !== null) guard.start(cursor);
  for (;;) {
    const p = await fetchPage({ ...first, cursor });
    guard.check(pageIds(p), p.nextCursor);
    yield p;
    if (p.nextCursor === null) return;
    cursor = p.nextCursor;
  }
}

async function single<T>(
  { opts, transport }: ClientIo,
  { collection, key, entityType, schema }: RecordSource<T>,
  requestedId: string,
  signal?: AbortSignal,
): Promise<T> {
  const path = entityPath(collection, entityType, requestedId);
  const { json } = await transport.getJson(path, {}, signal).catch((err: unknown) => {
    // A 403 on one record is that record's problem; the workspace's key is judged by the change log.
    if (err instanceof AuthRejectedError && err.status === 403) {
      throw new UpstreamRejectedError({ status: 403, method: err.method, path: err.path, body: err.body, attempts: err.attempts });
    }
    throw err;
  });
  const details: ApiErrorDetails = { status: 200, method: 'GET', path: shownPath(opts.basePath + path) };
  const raw = json !== null && typeof json === 'object' ? (json as Record<string, unknown>)[key] : undefined;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new InvalidResponseError(`expected {"${key}": {...}} but "${key}" is not an object`, details);
  }
  const r = validateRecord(entityType, schema, raw);
  if (!r.ok) throw new InvalidRecordError({ ...r.invalid, id: requestedId }, details);
  const got = (r.value as { id: string }).id;
  if (got !== requestedId) {
    throw new InvalidRecordError(
      { entityType, id: requestedId, reason: `the body is for id ${quote(got)}, not the id asked for`, raw },
      details,
    );
  }
  return r.value;
}

async function pipelines(
  { opts, transport }: ClientIo,
  signal?: AbortSignal,
): Promise<{ items: Pipeline[]; invalid: InvalidItem[]; serverDate: string | null }> {
  const { json, serverDate } = await transport.getJson('/api/v1/pipelines', {}, signal).catch((err: unknown) => {
    throw notTheApi(err);
  });
  const raws = json !== null && typeof json === 'object' ? (json as Record<string, unknown>).pipelines : undefined;
  if (!Array.isArray(raws)) {
    throw new InvalidResponseError('expected {"pipelines": [...]} but "pipelines" is not an array', {
      status: 200,
      method: 'GET',
      path: `${opts.basePath}/api/v1/pipelines`,
    });
  }
  return { ...validateItems('pipeline', pipelineSchema, raws), serverDate };
}

/**
 * The path of one record. An id that is not a safe path segment is never sent (src/api/path-ids.ts):
 * the read fails as the record's own problem (InvalidRecordError), so the sync quarantines it.
 */
function entityPath(collection: string, entityType: EntityType, id: string): string {
  if (typeof id !== 'string') throw new TypeError(`${collection} id must be a string`);
  const unsafe = unsafePathSegment(id);
  if (unsafe !== null) {
    throw new InvalidRecordError(
      { entityType, id, reason: `the id ${quote(id)} is not a safe path segment (${unsafe}); it was not requested`, raw: { id } },
      { status: null, method: 'GET', path: `/api/v1/${collection}/…` },
    );
  }
  return `/api/v1/${collection}/${encodeURIComponent(id)}`;
}

/**
 * On a list call without a cursor, these answers mean baseUrl is wrong rather than the workspace
 * being down: every list exists, the API never redirects and always answers JSON.
 */
function notTheApi(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  const details: ApiErrorDetails = { status: err.status, method: err.method, path: err.path, attempts: err.attempts };
  if (err instanceof NotFoundError) return new NotWorkspaceApiError('answered 404 Not Found', details);
  if (err instanceof UpstreamRejectedError && err.status !== null && err.status >= 300 && err.status < 400) {
    return new NotWorkspaceApiError(`answered ${err.status} (a redirect, which the API never sends)`, details);
  }
  if (err instanceof InvalidResponseError && /is HTML/.test(err.message)) return new NotWorkspaceApiError('answered an HTML page', details);
  return err;
}

function pageIds(p: Page<unknown>): string[] {
  const ids = p.items.map((item) => String((item as { id?: unknown }).id));
  for (const bad of p.invalid) ids.push(`invalid:${bad.id ?? bad.reason}`);
  return ids;
}
