import type { Kysely } from 'kysely';
import type { MirrorDatabase, TicketHistoryTable } from './schema.js';
import { insertRows, insertStatement, type InsertStatement } from './sql.js';
import { HISTORY_VALUE_COLUMNS } from '../entities/table-decl.js';
import { chunks } from './values.js';
import { entityOf, RECORD_TYPES, type HistoryOwner, type HistoryTable, type RecordType } from '../entities/index.js';

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

type Kind = RecordType;
const TABLE = (kind: Kind) => entityOf(kind).historyTable;
const OWNER = (kind: Kind) => entityOf(kind).historyOwner;

/** Any history table's row, as the queries below see it: OWNER(kind) is set, the other owner columns are absent. */
type EitherHistoryRow = Omit<TicketHistoryTable, 'ticket_id'> & { [owner in HistoryOwner]: string | null };

/**
 * Kysely cannot type a query over a union of tables, so the queries that pick their table and
 * owner column by kind see both tables through one row shape; column names stay checked.
 */
const either = (db: Db) => db as unknown as Kysely<{ [table in HistoryTable]: EitherHistoryRow }>;

/** The changes one read of a record shows against the mirror's copy. */
export interface ObservedChanges {
  id: string;
  changes: readonly FieldChange[];
  /** The stored copy's updated_at (stored form); null when it had none. */
  observedSince: string | null;
  /** The new copy's updated_at (stored form). */
  changedAt: string;
}

const HISTORY_COLUMNS = HISTORY_VALUE_COLUMNS;
const observed = new Map<RecordType, InsertStatement>();
/** The observed rows' insert of a kind, made on first use (a registered kind comes after this module loads). */
function observedInsert(kind: Kind): InsertStatement {
  let stmt = observed.get(kind);
  if (!stmt) observed.set(kind, (stmt = insertStatement(TABLE(kind), [OWNER(kind), ...HISTORY_COLUMNS])));
  return stmt;
}

/**
 * Observed changes between two reads (docs/sync.md, "History"), for records of one kind with
 * distinct ids. A change the change log already told (event rows of that field with changed_at in
 * (observedSince, changedAt] that explain it) is skipped: the event rows carry the exact times.
 * One query reads the event rows of every record, one statement writes the rows. Returns the rows
 * written per record, in order.
 */
export async function writeObservedHistory(db: Db, kind: Kind, all: readonly ObservedChanges[]): Promise<number[]> {
  // A copy of the version the mirror already holds tells no change the upstream made after it:
  // what differs was the mirror's own copy (a hand edit, a row mended by verify --repair), and
  // history must not show it as a move (docs/schema.md, "History semantics").
  const records = all.map((r) => (r.observedSince === r.changedAt ? { ...r, changes: [] } : r));
  const edges = await eventEdgesOf(
    db,
    kind,
    records
      .filter((r) => r.changes.length > 0)
      .map((r) => ({ id: r.id, fields: r.changes.map((c) => c.field), after: r.observedSince, upTo: r.changedAt })),
  );
  const rows: unknown[][] = [];
  const written = records.map((r) => {
    let n = 0;
    for (const c of r.changes) {
      if (eventsExplain(edges(r.id, c.field, r.observedSince, r.changedAt), c.from, c.to)) continue;
      rows.push([r.id, c.field, c.from, c.to, r.changedAt, 'observed', null, r.observedSince]);
      n++;
    }
    return n;
  });
  if (rows.length > 0) await insertRows(db, observedInsert(kind), rows);
  return written;
}

/** Where to look for event rows: a record's fields, in the interval (after, upTo]. */
interface Span {
  id: string;
  fields: readonly string[];
  after: string | null;
  upTo: string;
}

/** The event rows of a record's field with changed_at in (after, upTo]. */
type EdgesOf = (id: string, field: string, after: string | null, upTo: string) => Edge[];

/**
 * The event rows of every span, read with one query per few hundred records (from the earliest
 * interval start to the latest end among them); each span's own rows are picked out in memory.
 * Stored timestamps share one fixed-width form in both dialects, so they compare as text.
 */
async function eventEdgesOf(db: Db, kind: Kind, spans: readonly Span[]): Promise<EdgesOf> {
  const byKey = new Map<string, Edge[]>();
  const keyOf = (id: string, field: string) => `${id}\u0000${field}`;
  if (spans.length > 0) {
    const upTo = spans.reduce((max, s) => (s.upTo > max ? s.upTo : max), spans[0]!.upTo);
    const after = spans.some((s) => s.after === null)
      ? null
      : spans.reduce((min, s) => (s.after! < min ? s.after! : min), spans[0]!.after!);
    const fields = [...new Set(spans.flatMap((s) => s.fields))];
    for (const ids of chunks([...new Set(spans.map((s) => s.id))], 500)) {
      let q = either(db)
        .selectFrom(TABLE(kind))
        .select([OWNER(kind), 'field', 'from_value', 'to_value', 'changed_at'])
        .where(OWNER(kind), 'in', ids)
        .where('field', 'in', fields)
        .where('source', '=', 'event')
        .where('changed_at', '<=', upTo);
      if (after !== null) q = q.where('changed_at', '>', after);
      for (const r of await q.execute()) {
        const key = keyOf(String(r[OWNER(kind)]), r.field);
        const list = byKey.get(key) ?? [];
        list.push({ from: r.from_value, to: r.to_value, at: r.changed_at });
        byKey.set(key, list);
      }
    }
  }
  return (id, field, after, upTo) => (byKey.get(keyOf(id, field)) ?? []).filter((e) => e.at <= upTo && (after === null || e.at > after));
}

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
  for (const kind of RECORD_TYPES) {
    const mine = changes.filter((c) => c.kind === kind);
    if (mine.length === 0) continue;
    const rows = await either(db)
      .insertInto(TABLE(kind))
      .values(
        mine.map((e) => ({
          [OWNER(kind)]: e.entityId,
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
    .selectFrom(TABLE(kind))
    .select(['id', OWNER(kind), 'field', 'from_value', 'to_value', 'changed_at', 'observed_since'])
    .where(OWNER(kind), 'in', ids)
    .where('source', '=', 'observed')
    .execute();
  const touched = observed.filter(
    (o) =>
      o[OWNER(kind)] !== null &&
      events.some(
        (e) =>
          e.entityId === o[OWNER(kind)] &&
          e.field === o.field &&
          e.at <= o.changed_at &&
          (o.observed_since === null || o.observed_since < e.at),
      ),
  );
  const span = (o: (typeof observed)[number]) => ({
    id: o[OWNER(kind)]!,
    fields: [o.field],
    after: o.observed_since,
    upTo: o.changed_at,
  });
  const edges = await eventEdgesOf(db, kind, touched.map(span));
  const explained = touched.filter((o) => {
    const s = span(o);
    return eventsExplain(edges(s.id, o.field, s.after, s.upTo), o.from_value, o.to_value);
  });
  for (const batch of chunks(
    explained.map((o) => o.id),
    500,
  )) {
    await either(db).deleteFrom(TABLE(kind)).where('id', 'in', batch).execute();
  }
}
