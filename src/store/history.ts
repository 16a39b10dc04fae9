import type { Kysely } from 'kysely';
import type { MirrorDatabase, TicketHistoryTable } from './schema.js';

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

interface Edge {
  from: string | null;
  to: string | null;
  at: string;
}

/**
 * True when the events recorded for one field in one interval explain an observed from→to change
 * on their own: a single matching event, or a chain of events (open→pending→solved explains an
 * observed open→solved). Events in the same millisecond may be applied in any order, because the
 * upstream log does not order them.
 */
export function eventsExplain(edges: readonly Edge[], from: string | null, to: string | null): boolean {
  if (edges.some((e) => e.from === from && e.to === to)) return true;
  if (edges.length === 0) return false;
  const groups = new Map<string, Edge[]>();
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

type Kind = 'ticket' | 'deal';
const TABLE = { ticket: 'ticket_history', deal: 'deal_history' } as const;
const OWNER = { ticket: 'ticket_id', deal: 'deal_id' } as const;

/** Either history table's row, as the queries below see it: OWNER[kind] is set, the other owner column is absent. */
type EitherHistoryRow = Omit<TicketHistoryTable, 'ticket_id'> & { ticket_id: string | null; deal_id: string | null };

/**
 * Kysely cannot type a query over a union of tables, so the queries that pick their table and
 * owner column by kind see both tables through one row shape; column names stay checked.
 */
const either = (db: Db) => db as unknown as Kysely<{ ticket_history: EitherHistoryRow; deal_history: EitherHistoryRow }>;

async function eventEdgesBetween(db: Db, kind: Kind, id: string, field: string, after: string | null, upTo: string): Promise<Edge[]> {
  // Table and owner column vary by kind; Kysely cannot type a union of tables, so `any` here only.
  let q = either(db)
    .selectFrom(TABLE[kind])
    .select(['from_value', 'to_value', 'changed_at'])
    .where(OWNER[kind], '=', id)
    .where('field', '=', field)
    .where('source', '=', 'event')
    .where('changed_at', '<=', upTo);
  if (after !== null) q = q.where('changed_at', '>', after);
  const rows = await q.execute();
  return rows.map((r) => ({ from: r.from_value, to: r.to_value, at: r.changed_at }));
}

/**
 * Observed changes between two reads (docs/sync.md, "History"). A change the change log already
 * told (event rows of that field with changed_at in (observedSince, changedAt] that explain it) is
 * skipped: the event rows carry the exact times.
 */
async function writeObserved(
  db: Db,
  kind: Kind,
  id: string,
  changes: readonly FieldChange[],
  observedSince: string | null,
  changedAt: string,
): Promise<number> {
  const rows = [];
  for (const c of changes) {
    const edges = await eventEdgesBetween(db, kind, id, c.field, observedSince, changedAt);
    if (eventsExplain(edges, c.from, c.to)) continue;
    rows.push({
      [OWNER[kind]]: id,
      field: c.field,
      from_value: c.from,
      to_value: c.to,
      changed_at: changedAt,
      source: 'observed' as const,
      event_id: null,
      observed_since: observedSince,
    });
  }
  if (rows.length > 0) await either(db).insertInto(TABLE[kind]).values(rows).execute();
  return rows.length;
}

export const writeObservedTicketHistory = (
  db: Db,
  ticketId: string,
  changes: readonly FieldChange[],
  observedSince: string | null,
  changedAt: string,
) => writeObserved(db, 'ticket', ticketId, changes, observedSince, changedAt);

export const writeObservedDealHistory = (
  db: Db,
  dealId: string,
  changes: readonly FieldChange[],
  observedSince: string | null,
  changedAt: string,
) => writeObserved(db, 'deal', dealId, changes, observedSince, changedAt);

/** One field change told by one change-log event (history.ts derives these in events-history.ts). */
export interface EventChange {
  kind: Kind;
  eventId: string;
  entityId: string;
  field: string;
  from: string | null;
  to: string | null;
  /** The event's occurredAt, in the stored form. */
  at: string;
}

/**
 * Event-sourced history rows. Afterwards, an observed row of the same field whose interval now
 * holds events that explain it is deleted, so a late-visible event replaces the coarser
 * observation. Returns the number of event rows inserted.
 */
export async function writeEventHistory(db: Db, changes: readonly EventChange[]): Promise<number> {
  let inserted = 0;
  for (const kind of ['ticket', 'deal'] as const) {
    const mine = changes.filter((c) => c.kind === kind);
    if (mine.length === 0) continue;
    const rows = await either(db)
      .insertInto(TABLE[kind])
      .values(
        mine.map((e) => ({
          [OWNER[kind]]: e.entityId,
          field: e.field,
          from_value: e.from,
          to_value: e.to,
          changed_at: e.at,
          source: 'event' as const,
          event_id: e.eventId,
          observed_since: null,
        })),
      )
      .onConflict((oc) => oc.columns(['event_id', 'field']).doNothing())
      .returning('id')
      .execute();
    inserted += rows.length;
    await dropExplainedObservations(db, kind, mine);
  }
  return inserted;
}

/**
 * Deletes the observed rows the new events now explain. One query finds the observed rows of the
 * batch's records (almost always none: a backfill writes none, a live cycle writes events first).
 */
async function dropExplainedObservations(db: Db, kind: Kind, events: readonly EventChange[]): Promise<void> {
  const ids = [...new Set(events.map((e) => e.entityId))];
  const observed = await either(db)
    .selectFrom(TABLE[kind])
    .select(['id', OWNER[kind], 'field', 'from_value', 'to_value', 'changed_at', 'observed_since'])
    .where(OWNER[kind], 'in', ids)
    .where('source', '=', 'observed')
    .execute();
  for (const o of observed) {
    const owner = o[OWNER[kind]];
    const touched = events.some(
      (e) => e.entityId === owner && e.field === o.field && e.at <= o.changed_at && (o.observed_since === null || o.observed_since < e.at),
    );
    if (!touched || owner === null) continue;
    const edges = await eventEdgesBetween(db, kind, owner, o.field, o.observed_since, o.changed_at);
    if (eventsExplain(edges, o.from_value, o.to_value)) {
      await either(db).deleteFrom(TABLE[kind]).where('id', '=', o.id).execute();
    }
  }
}
