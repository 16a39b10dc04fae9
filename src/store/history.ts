import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';

type Db = Kysely<MirrorDatabase>;

export interface FieldChange {
  field: string;
  from: string | null;
  to: string | null;
}

/** Compares the tracked fields of two rows; values are compared as stored text. */
export function diffFields<R extends Record<string, unknown>>(
  before: R,
  after: R,
  fields: readonly { column: keyof R & string; field: string }[],
): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const { column, field } of fields) {
    const from = before[column] === undefined || before[column] === null ? null : String(before[column]);
    const to = after[column] === undefined || after[column] === null ? null : String(after[column]);
    if (from !== to) changes.push({ field, from, to });
  }
  return changes;
}

interface StatusEdge {
  from: string | null;
  to: string | null;
  at: string;
}

/**
 * True when the status events recorded in one interval explain an observed from→to change on
 * their own: a single matching event, or a chain of events (open→pending→solved explains an
 * observed open→solved). Events in the same millisecond may be applied in any order, because the
 * upstream log does not order them.
 */
export function eventsExplain(edges: readonly StatusEdge[], from: string, to: string): boolean {
  if (edges.some((e) => e.from === from && e.to === to)) return true;
  if (edges.length === 0) return false;
  const groups = new Map<string, StatusEdge[]>();
  for (const e of [...edges].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))) {
    const g = groups.get(e.at) ?? [];
    g.push(e);
    groups.set(e.at, g);
  }
  let current: string | null = from;
  for (const group of groups.values()) {
    const left = [...group];
    for (let i = left.findIndex((e) => e.from === current); i >= 0; i = left.findIndex((e) => e.from === current)) {
      current = left[i]!.to;
      left.splice(i, 1);
    }
    if (left.length > 0) return false;
  }
  return current === to;
}

async function statusEventsBetween(db: Db, ticketId: string, after: string | null, upTo: string): Promise<StatusEdge[]> {
  let q = db
    .selectFrom('ticket_history')
    .select(['from_value', 'to_value', 'changed_at'])
    .where('ticket_id', '=', ticketId)
    .where('field', '=', 'status')
    .where('source', '=', 'event')
    .where('changed_at', '<=', upTo);
  if (after !== null) q = q.where('changed_at', '>', after);
  const rows = await q.execute();
  return rows.map((r) => ({ from: r.from_value, to: r.to_value, at: String(r.changed_at) }));
}

/**
 * Observed ticket changes between two reads. A status change already told by the change log
 * (event rows with changed_at in (observedSince, changedAt]) is skipped: the event time is exact.
 */
export async function writeObservedTicketHistory(
  db: Db,
  ticketId: string,
  changes: readonly FieldChange[],
  observedSince: string | null,
  changedAt: string,
): Promise<number> {
  const rows = [];
  for (const c of changes) {
    if (c.field === 'status' && c.from !== null && c.to !== null) {
      const edges = await statusEventsBetween(db, ticketId, observedSince, changedAt);
      if (eventsExplain(edges, c.from, c.to)) continue;
    }
    rows.push({
      ticket_id: ticketId, field: c.field, from_value: c.from, to_value: c.to,
      changed_at: changedAt, source: 'observed' as const, event_id: null, observed_since: observedSince,
    });
  }
  if (rows.length > 0) await db.insertInto('ticket_history').values(rows).execute();
  return rows.length;
}

export async function writeObservedDealHistory(
  db: Db,
  dealId: string,
  changes: readonly FieldChange[],
  observedSince: string | null,
  changedAt: string,
): Promise<number> {
  if (changes.length === 0) return 0;
  await db
    .insertInto('deal_history')
    .values(changes.map((c) => ({
      deal_id: dealId, field: c.field, from_value: c.from, to_value: c.to,
      changed_at: changedAt, source: 'observed' as const, event_id: null, observed_since: observedSince,
    })))
    .execute();
  return changes.length;
}

export interface StatusEventRow {
  eventId: string;
  ticketId: string;
  from: string;
  to: string;
  at: string;
}

/**
 * Event-sourced status rows. Afterwards, an observed status row whose interval now holds events
 * that explain it is deleted, so a late-visible event replaces the coarser observation.
 * Returns the number of event rows inserted.
 */
export async function writeStatusEvents(db: Db, events: readonly StatusEventRow[]): Promise<number> {
  if (events.length === 0) return 0;
  const inserted = await db
    .insertInto('ticket_history')
    .values(events.map((e) => ({
      ticket_id: e.ticketId, field: 'status', from_value: e.from, to_value: e.to,
      changed_at: e.at, source: 'event' as const, event_id: e.eventId, observed_since: null,
    })))
    .onConflict((oc) => oc.column('event_id').doNothing())
    .returning('id')
    .execute();

  for (const e of events) {
    const observed = await db
      .selectFrom('ticket_history')
      .select(['id', 'from_value', 'to_value', 'changed_at', 'observed_since'])
      .where('ticket_id', '=', e.ticketId)
      .where('field', '=', 'status')
      .where('source', '=', 'observed')
      .where('changed_at', '>=', e.at)
      .where((eb) => eb.or([eb('observed_since', 'is', null), eb('observed_since', '<', e.at)]))
      .execute();
    for (const o of observed) {
      if (o.from_value === null || o.to_value === null) continue;
      const since = o.observed_since === null ? null : String(o.observed_since);
      const edges = await statusEventsBetween(db, e.ticketId, since, String(o.changed_at));
      if (eventsExplain(edges, o.from_value, o.to_value)) {
        await db.deleteFrom('ticket_history').where('id', '=', o.id).execute();
      }
    }
  }
  return inserted.length;
}
