import { priorityValues, resolvePriority, resolveStatus, statusCategory } from './catalog.js';
import { decodeCursor, encodeCursor, filtersFor, type CursorState } from './cursor.js';
import { ApiError, invalid } from './errors.js';
import { envelopeExtrasJson } from './extras.js';
import type { Deal, Ticket } from './model.js';
import { deleteDeal } from './deal-ops.js';
import { listPage } from './list-paging.js';
import { hideTicket } from './ticket-lifecycle.js';
import { dealListJson, dealStatus, eventJson, ticketListJson } from './render.js';
import { sinceForShown } from './spelling.js';
import type { SimRecordKind } from './types.js';
import type { World } from './world.js';

type Query = Record<string, string>;

const TICKET_FILTERS = ['status', 'priority', 'assigneeId', 'teamId', 'contactId', 'tag', 'q'] as const;
const DEAL_FILTERS = ['pipelineId', 'stageId', 'status', 'ownerId', 'companyId', 'contactId', 'q'] as const;
const EVENT_FILTERS = ['type', 'entityType', 'entityId', 'since'] as const;

export function parseLimit(query: Query): number {
  const raw = query.limit;
  if (raw === undefined) return 50;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 100) throw invalid('limit', 'must be a whole number from 1 to 100');
  return Number(raw);
}

function cursorOf(world: World, kind: CursorState['kind'], query: Query): CursorState | null {
  const raw = query.cursor;
  if (raw === undefined || raw === '') return null;
  return decodeCursor(world, kind, raw);
}

function ticketMatcher(world: World, f: Query): (t: Ticket) => boolean {
  const checks: ((t: Ticket) => boolean)[] = [];
  if (f.status !== undefined) {
    const s = f.status.trim().toLowerCase();
    if (s === 'unresolved' || s === 'resolved') {
      checks.push((t) => statusCategory(t.status) === s);
    } else {
      const def = resolveStatus(s, world.dialect.unlistedValues);
      if (!def) throw invalid('status', 'unknown status; use a status value or label, unresolved or resolved');
      checks.push((t) => t.status === def.value);
    }
  }
  if (f.priority !== undefined) {
    const def = resolvePriority(f.priority, world.dialect.unlistedValues);
    if (!def) throw invalid('priority', `must be one of ${priorityValues(world.dialect.unlistedValues).join(', ')}`);
    checks.push((t) => t.priority === def.value);
  }
  if (f.assigneeId !== undefined) {
    const want = f.assigneeId === 'unassigned' ? null : f.assigneeId;
    checks.push((t) => t.assigneeId === want);
  }
  if (f.teamId !== undefined) checks.push((t) => t.teamId === f.teamId);
  if (f.contactId !== undefined) checks.push((t) => t.contactId === f.contactId);
  if (f.tag !== undefined) {
    const tag = f.tag.toLowerCase();
    checks.push((t) => t.tags.some((x) => x.toLowerCase() === tag));
  }
  if (f.q !== undefined && f.q.trim() !== '') {
    const q = f.q.trim().toLowerCase();
    checks.push((t) => {
      if (t.subject.toLowerCase().includes(q) || `#${t.number}`.includes(q) || String(t.number) === q) return true;
      const c = world.contacts.get(t.contactId);
      if (c && `${c.firstName} ${c.lastName} ${c.email}`.toLowerCase().includes(q)) return true;
      return t.messages.some((m) => m.body.toLowerCase().includes(q));
    });
  }
  return (t) => checks.every((check) => check(t));
}

function dealMatcher(world: World, f: Query): (d: Deal) => boolean {
  const checks: ((d: Deal) => boolean)[] = [];
  if (f.status !== undefined) {
    const s = f.status.trim().toLowerCase();
    if (s !== 'open' && s !== 'won' && s !== 'lost') throw invalid('status', 'must be open, won or lost');
    checks.push((d) => {
      const stage = world.stages.get(d.stageId);
      return stage !== undefined && dealStatus(stage) === s;
    });
  }
  if (f.pipelineId !== undefined) checks.push((d) => d.pipelineId === f.pipelineId);
  if (f.stageId !== undefined) checks.push((d) => d.stageId === f.stageId);
  if (f.ownerId !== undefined) checks.push((d) => d.ownerId === f.ownerId);
  if (f.companyId !== undefined) checks.push((d) => d.companyId === f.companyId);
  if (f.contactId !== undefined) checks.push((d) => d.contactIds.includes(f.contactId as string));
  if (f.q !== undefined && f.q.trim() !== '') {
    const q = f.q.trim().toLowerCase();
    checks.push((d) => d.name.toLowerCase().includes(q));
  }
  return (d) => checks.every((check) => check(d));
}

export function listTickets(world: World, query: Query, stale = false): string {
  const limit = parseLimit(query);
  const cursor = cursorOf(world, 'tickets', query);
  const filters = filtersFor(cursor, query, TICKET_FILTERS);
  const page = listPage(
    world,
    {
      kind: 'tickets',
      index: world.ticketIndex,
      writes: world.ticketWrites,
      matches: ticketMatcher(world, filters),
      listable: (t) => t.hidden === null,
      remove: (tickets) => removeTickets(world, tickets),
    },
    cursor,
    limit,
  );
  const next = page.next ? encodeCursor(world, { kind: 'tickets', ...page.next, filters }) : null;
  const items = page.items.map((t) => (stale && t.prevBody ? staleItem(t.prevBody, 'ticket') : ticketListJson(world, t)));
  return listBody(world, 'tickets', items, next, limit);
}

export function listDeals(world: World, query: Query, stale = false): string {
  const limit = parseLimit(query);
  const cursor = cursorOf(world, 'deals', query);
  const filters = filtersFor(cursor, query, DEAL_FILTERS);
  const page = listPage(
    world,
    {
      kind: 'deals',
      index: world.dealIndex,
      writes: world.dealWrites,
      matches: dealMatcher(world, filters),
      listable: (d) => !d.deleted,
      remove: (deals) => deals.forEach((d) => deleteDeal(world, null, d.id)),
    },
    cursor,
    limit,
  );
  const next = page.next ? encodeCursor(world, { kind: 'deals', ...page.next, filters }) : null;
  const items = page.items.map((d) => (stale && d.prevBody ? staleItem(d.prevBody, 'deal') : dealListJson(world, d)));
  return listBody(world, 'deals', items, next, limit);
}

const HIDE_REASONS = ['deleted', 'spam', 'merged'] as const;

/** Tickets leave the list in turn deleted, as spam and merged (into the newest ticket not leaving), as the control's hide does. */
function removeTickets(world: World, tickets: readonly Ticket[]): void {
  const leaving = new Set(tickets.map((t) => t.id));
  const into = world.ticketIndex.newestFirst().find((t) => !leaving.has(t.id))?.id;
  tickets.forEach((t, i) => hideTicket(world, t.id, HIDE_REASONS[i % HIDE_REASONS.length]!, into));
}

/** `{"<key>":[...],"nextCursor":...}`: the last page ends as the dialect's `listEnd` says; extras go last. */
function listBody(world: World, key: string, items: string[], next: string | null, limit: number): string {
  const { listEnd, extraFields } = world.dialect;
  let end: string;
  if (next !== null) end = `,"nextCursor":${JSON.stringify(next)}`;
  else end = listEnd === 'absent' ? '' : listEnd === 'empty' ? ',"nextCursor":""' : ',"nextCursor":null';
  return `{"${key}":[${items.join(',')}]${end}${extraFields ? envelopeExtrasJson(key, items.length, limit) : ''}}`;
}

/**
 * A list item as a lagging replica would serve it: the version before the last write (the body
 * kept for stale single reads, without messages), at the record's current place in the list.
 */
function staleItem(prevBody: Buffer, key: SimRecordKind): string {
  const record = (JSON.parse(prevBody.toString()) as Record<string, Record<string, unknown>>)[key]!;
  delete record.messages;
  return JSON.stringify(record);
}

export function parseSince(raw: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw invalid('since', 'must be an ISO 8601 timestamp such as 2024-05-01T12:00:00.000Z');
  return ms;
}

/** `oldestFirst` (a fault) sends each page's events in reverse; the pages and cursors stay the same. */
export function listEvents(world: World, query: Query, oldestFirst = false): string {
  const limit = parseLimit(query);
  const cursor = cursorOf(world, 'events', query);
  const f = filtersFor(cursor, query, EVENT_FILTERS);
  const filter = {
    type: f.type,
    entityType: f.entityType,
    entityId: f.entityId,
    sinceMs: f.since !== undefined ? sinceForShown(world.dialect.timestamps, parseSince(f.since)) : undefined,
  };
  let after = null;
  if (cursor) {
    const seq = Number(cursor.key);
    if (!Number.isInteger(seq)) throw new ApiError(400, 'invalid_cursor', 'The cursor is not valid; start again from the first page.');
    after = { ms: cursor.ms, seq };
  }
  const now = world.clock.nowMs();
  const page = world.events.page(filter, after, limit, now);
  const last = page.events[page.events.length - 1];
  const next =
    page.more && last
      ? encodeCursor(world, { kind: 'events', snapshot: 0, ms: last.occurredAtMs, key: String(last.seq), filters: f })
      : null;
  const events = oldestFirst ? [...page.events].reverse() : page.events;
  return listBody(
    world,
    'events',
    events.map((e) => eventJson(world, e)),
    next,
    limit,
  );
}
