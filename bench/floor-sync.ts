/**
 * The tick sync's lean equivalent (bench/README.md, "The tick sync's lean equivalent"): the
 * requests of wsmirror's list-based plan (pipelines, the window's change-log pages, the
 * newest-first deal and ticket list pages that hold the records changed since the watermark, and
 * one GET per ticket whose messages may have changed or that the list did not hold), every
 * answer stored in the mirror's tables the cheapest way each database allows for rows that may
 * already exist (bench/floor-sync-sinks.ts), one transaction per group of pages, and nothing
 * else: no validation, history, dirty marks, saved cursor or `rpt_` refresh. It runs on a copy of
 * the mirror wsmirror's tick starts from, so both write the same rows; like the backfill's lean
 * job, it makes the requests wsmirror makes, so the comparison is of the work done per answer.
 *
 * A record deleted upstream gets its `deleted_at` (from its `*.deleted` event, else the time its
 * read answered 404), as wsmirror's does: that is an answer stored too.
 */
import { Pool } from 'undici';
import { DEAL_LIST, DEAL_READ, EVENT_LIST, pipelineSchema, TICKET_LIST, TICKET_READ, type WorkspaceEvent } from '../src/api/schemas.js';
import { mapConcurrent } from '../src/util/concurrency.js';
import { type FloorFigures } from './floor.js';
import { Rows, toRows } from './floor-rows.js';
import { contractTick, type ContractTick } from './floor-sync-contract.js';
import { newGroup, postgresSink, sqliteSink, type Group } from './floor-sync-sinks.js';

const CONCURRENCY = 8;
const PAGE = 100;
/** Pages per transaction, as wsmirror's groups (src/sync/page-group.ts); records read go in groups of as many. */
const GROUP_PAGES = 10;
/** Ticket events that never touch messages (src/entities/ticket.ts): the list item stands in for the read. */
const FIELD_ONLY = new Set(['ticket.status_changed', 'ticket.priority_changed', 'ticket.assigned', 'ticket.updated']);
/** The lists the floor converts (bench/floor-rows.ts): its hand-written baseline of the two real types. */
type RecordTable = 'tickets' | 'deals';

/** The window the mirror's next cycle reads (from `since`) and its watermark, as the raw loop gets it. */
export interface SyncWindow {
  since: string;
  watermark: string;
}

interface WireEvent {
  type: string;
  entityType: string;
  entityId: string;
  occurredAt: string;
}

/**
 * A record changed since the watermark: its newest event, whether only a read by id shows the
 * change, whether it was deleted, and whether it was created (then the mirror does not hold it).
 */
interface Mark {
  table: RecordTable;
  id: string;
  atMs: number;
  read: boolean;
  deleted: boolean;
  created: boolean;
}

type Get = (path: string) => Promise<{ status: number; body: Record<string, unknown> }>;
type Convert = ReturnType<typeof toRows>;
/** A group, with the change-log events the contract floor hands to wsmirror's event writer. */
type TickGroup = Group & { events: WorkspaceEvent[] };
/** What the plan's steps share: the reads, the row converter, the hand-over of groups, the contract's work. */
interface Job {
  get: Get;
  convert: Convert;
  flush: (g: TickGroup) => Promise<void>;
  /** The contract floor's added work (bench/floor-sync-contract.ts); null for the lean tick. */
  contract: ContractTick | null;
}

const tickGroup = (): TickGroup => ({ ...newGroup(), events: [] });

export interface FloorSyncOptions {
  /**
   * The tick's contract floor (bench/README.md, "The tick's contract floor"): also check every
   * answer with wsmirror's schemas, store the change log through wsmirror's event writer (with the
   * history it tells) and refresh the `rpt_` rows of what changed. Default false: the lean tick.
   */
  contract?: boolean;
}

/** Runs the lean tick on `database` (a migrated mirror: a copy of the one wsmirror's tick starts from). */
export async function floorSync(
  url: string,
  key: string,
  database: string,
  window: SyncWindow,
  options: FloorSyncOptions = {},
): Promise<FloorFigures> {
  const postgres = /^postgres(ql)?:\/\//.test(database);
  const sink = postgres ? await postgresSink(database) : sqliteSink(database);
  const contract = options.contract ? await contractTick(database) : null;
  const pool = new Pool(url, { connections: CONCURRENCY });
  let requests = 0;
  const get: Get = async (path) => {
    requests++;
    const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const now = new Date().toISOString();
  const convert = toRows(postgres ? 'postgres' : 'sqlite', now);
  let written = 0;
  let writing: Promise<void> = Promise.resolve();
  // One group writes while the next is read; writes run one at a time, in the order handed over.
  const flush = async (group: TickGroup) => {
    const before = writing;
    written += group.rows.count + group.events.length;
    writing = before.then(async () => {
      await contract?.observe(group.rows);
      await sink.write(group);
      await contract?.storeEvents(group.events);
    });
    await before;
  };
  const job: Job = { get, convert, flush, contract };
  try {
    const marks = await readLog(job, window);
    const reads = [...marks.values()].filter((m) => m.read);
    const leftOver = await Promise.all([scanList(job, marks, 'deals'), scanList(job, marks, 'tickets'), readById(job, reads, now)]);
    await readById(job, [...leftOver[0], ...leftOver[1]], now);
    await writing;
    // Every changed record was written or marked deleted: wsmirror's cycle refreshes them all.
    for (const m of marks.values()) contract?.changed(m.table, m.id);
    await contract?.refresh();
  } finally {
    await writing.catch(() => undefined);
    await sink.close();
    await contract?.close();
    await pool.close();
  }
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpuStart);
  const figures = { ms, cpuMs: Math.round((user + system) / 1000), storeMs: sink.storeMs, requests, rows: written };
  return contract ? { ...figures, ...contract.figures() } : figures;
}

/** Pipelines and the window's change-log pages, stored; returns the records changed since the watermark. */
async function readLog({ get, convert, flush, contract }: Job, window: SyncWindow): Promise<Map<string, Mark>> {
  const watermarkMs = Date.parse(window.watermark);
  let group = tickGroup();
  const { body: pipelines } = await get('/api/v1/pipelines');
  contract?.check('pipeline', pipelineSchema, pipelines.pipelines as unknown[]);
  (pipelines.pipelines as Record<string, unknown>[]).forEach((p, i) => convert.pipeline(p, i, group.rows));
  const marks = new Map<string, Mark>();
  let pages = 0;
  for (let cursor: string | null = null, first = true; first || cursor; first = false) {
    const { body: page } = await get(
      `/api/v1/events?limit=${PAGE}&since=${encodeURIComponent(window.since)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    // The contract floor's event writer stores the events and their actors; the converter only learns the actors.
    if (contract) group.events.push(...contract.check('event', EVENT_LIST.schema, page.events as unknown[]));
    for (const e of page.events as (Record<string, unknown> & WireEvent)[]) {
      convert.event(e, contract ? new Rows() : group.rows);
      const atMs = Date.parse(e.occurredAt);
      if ((e.entityType !== 'ticket' && e.entityType !== 'deal') || atMs < watermarkMs) continue;
      const table: RecordTable = `${e.entityType}s`;
      const deleted = e.type === `${e.entityType}.deleted`;
      if (deleted) group.deleted.push({ table, id: e.entityId, at: e.occurredAt });
      const key = `${table}/${e.entityId}`;
      const mark = marks.get(key) ?? { table, id: e.entityId, atMs, read: false, deleted: false, created: false };
      mark.atMs = Math.max(mark.atMs, atMs);
      // Deals are always whole in the list; a ticket's messages only in its read by id.
      mark.read ||= table === 'tickets' && !FIELD_ONLY.has(e.type);
      mark.deleted ||= deleted;
      mark.created ||= e.type === `${e.entityType}.created`;
      marks.set(key, mark);
    }
    cursor = page.nextCursor as string | null;
    if (++pages % GROUP_PAGES === 0) {
      await flush(group);
      group = tickGroup();
    }
  }
  await flush(group);
  return marks;
}

/**
 * The newest-first list of `table`, paged as wsmirror's list scan (src/sync/list-scan.ts) pages
 * it: until every record of it changed since the watermark (but those that need a read by id)
 * is found, or the page ends below the oldest of their marks, or the list ends, or it has cost
 * as many pages as there are such records. Returns the records it did not settle, to be read by
 * id. A deleted one the scan went below (it left the list) needs no read when the mirror held it
 * (its event set deleted_at), as wsmirror confirms it from the mirror; one created since the
 * watermark the mirror never held, and wsmirror reads it (a 404).
 */
async function scanList({ get, convert, flush, contract }: Job, marks: Map<string, Mark>, table: RecordTable): Promise<Mark[]> {
  const targets = new Map([...marks.values()].filter((m) => m.table === table && !m.read).map((m) => [m.id, m]));
  const budget = targets.size;
  const downToMs = Math.min(...[...targets.values()].map((m) => m.atMs));
  let group = tickGroup();
  let pages = 0;
  let passedMarks = false;
  for (let cursor: string | null = null; targets.size > 0 && pages < budget;) {
    const { body: page } = await get(`/api/v1/${table}?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    const items = page[table] as (Record<string, unknown> & { id: string; updatedAt: string })[];
    contract?.check(table === 'deals' ? 'deal' : 'ticket', table === 'deals' ? DEAL_LIST.schema : TICKET_LIST.schema, items);
    for (const item of items) {
      if (!targets.delete(item.id)) continue;
      if (table === 'deals') convert.deal(item, group.rows);
      else {
        convert.ticket(item, group.rows);
        group.listed.add(item.id);
      }
    }
    if (++pages % GROUP_PAGES === 0) {
      await flush(group);
      group = tickGroup();
    }
    cursor = page.nextCursor as string | null;
    const last = items[items.length - 1];
    if (!cursor || (last !== undefined && Date.parse(last.updatedAt) < downToMs)) {
      passedMarks = true;
      break;
    }
  }
  await flush(group);
  return [...targets.values()].filter((m) => !(passedMarks && m.deleted && !m.created));
}

/** GET by id, in groups of as many records as a group of pages holds; a 404 marks the record deleted. */
async function readById({ get, convert, flush, contract }: Job, marks: Mark[], now: string): Promise<void> {
  for (let i = 0; i < marks.length; i += GROUP_PAGES * PAGE) {
    const g = tickGroup();
    await mapConcurrent(marks.slice(i, i + GROUP_PAGES * PAGE), CONCURRENCY, async ({ table, id }) => {
      const { status, body } = await get(`/api/v1/${table}/${id}`);
      if (status === 404) g.deleted.push({ table, id, at: now });
      else if (table === 'tickets') {
        contract?.check('ticket', TICKET_READ.schema, [body.ticket]);
        convert.ticket(body.ticket as Record<string, unknown>, g.rows);
      } else {
        contract?.check('deal', DEAL_READ.schema, [body.deal]);
        convert.deal(body.deal as Record<string, unknown>, g.rows);
      }
    });
    await flush(g);
  }
}
