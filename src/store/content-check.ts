import type { Kysely } from 'kysely';
import type { Deal, Pipeline, Ticket } from '../api/index.js';
import { clipText } from '../api/index.js';
import { same, type ChildRow, type ChildTable } from './children.js';
import { CONTACTS, FIELDS as DEAL_FIELDS, prepareDeal, type PreparedDeal } from './deals.js';
import { selectIn } from './key-sets.js';
import type { MirrorDatabase } from './schema.js';
import { FIELDS as TICKET_FIELDS, MESSAGES, messageRows, prepareTicket, TAGS, type PreparedTicket } from './tickets.js';
import { jsonColumnsOf, type TableDecl } from '../entities/table-decl.js';
import { TABLES } from './tables.js';
import { bool, json, str } from './values.js';

type Db = Kysely<MirrorDatabase>;

/** One place where the mirror's copy differs from what it should hold. */
export interface ContentDifference {
  /** A column (`subject`), or a child table (`ticket_tags`, `ticket_messages`). */
  what: string;
  /** What the list page (or, for messages, the stored copy) says. */
  expected: string;
  /** What the mirror's rows hold. */
  found: string;
}

/** Columns not compared: the key, the mirror's own bookkeeping, and the raw copy (a list item lacks messages). */
const SKIPPED = new Set(['id', 'deleted_at', 'synced_at', 'raw_json']);

const shown = (v: unknown): string => clipText(v === null || v === undefined ? 'null' : typeof v === 'string' ? v : (json(v) ?? ''), 120);

/** How a table's columns compare as stored, from its declaration (none: every column as plain values). */
interface ColumnKinds {
  /** JSON columns compare by value (PostgreSQL's jsonb spells JSON its own way). */
  json: ReadonlySet<string>;
  /** Exact decimals (REAL in SQLite, numeric text in PostgreSQL) compare by number. */
  numeric: ReadonlySet<string>;
}
const PLAIN: ColumnKinds = { json: new Set(), numeric: new Set() };
const kindsOf = (table: TableDecl): ColumnKinds => ({
  json: new Set(jsonColumnsOf(table)),
  numeric: new Set(Object.keys(table.columns).filter((c) => table.columns[c]!.type === 'numeric')),
});

/** Equal as stored: booleans as 0/1, JSON by value, an exact decimal by number. */
function equalStored(kinds: ColumnKinds, column: string, stored: unknown, next: unknown): boolean {
  if (kinds.numeric.has(column) && stored !== null && next !== null && stored !== undefined) return Number(stored) === Number(next);
  return same(stored, next, kinds.json.has(column));
}

function rowDifferences(
  columns: readonly string[],
  stored: Record<string, unknown>,
  next: Record<string, unknown>,
  kinds: ColumnKinds = PLAIN,
): ContentDifference[] {
  return columns
    .filter((c) => !SKIPPED.has(c) && !equalStored(kinds, c, stored[c] ?? null, next[c] ?? null))
    .map((c) => ({ what: c, expected: shown(next[c]), found: shown(stored[c]) }));
}

/** Child rows of many parents, keyed parent → child key → row (the ChildTable's value columns). */
async function storedChildren(
  db: Db,
  spec: ChildTable,
  ids: readonly string[],
): Promise<Map<string, Map<string, Record<string, unknown>>>> {
  const rows = await selectIn<Record<string, unknown>>(db, [spec.parent, spec.key, ...spec.values], spec.table, spec.parent, ids);
  const out = new Map<string, Map<string, Record<string, unknown>>>();
  for (const r of rows) {
    const parent = String(r[spec.parent]);
    const byKey = out.get(parent) ?? new Map<string, Record<string, unknown>>();
    byKey.set(String(r[spec.key]), r);
    out.set(parent, byKey);
  }
  return out;
}

/** Whether a parent's stored child rows are exactly `rows`; a difference names the table and the first key that differs. */
function childDifference(
  spec: ChildTable,
  rows: readonly ChildRow[],
  stored: Map<string, Record<string, unknown>> | undefined,
): ContentDifference | null {
  const have = stored ?? new Map<string, Record<string, unknown>>();
  const want = new Map(rows.map((r) => [r[0], r]));
  for (const [key, r] of want) {
    const s = have.get(key);
    const bad = s === undefined ? 'missing' : spec.values.find((c, i) => !same(s[c], r[i + 1], spec.json?.includes(c) ?? false));
    if (bad !== undefined)
      return {
        what: spec.table,
        expected: `${want.size} row(s)`,
        found: `${have.size} row(s); ${key}: ${bad === 'missing' ? 'missing' : `${bad} differs`}`,
      };
  }
  const extra = [...have.keys()].find((k) => !want.has(k));
  return extra === undefined
    ? null
    : { what: spec.table, expected: `${want.size} row(s)`, found: `${have.size} row(s); ${extra}: not in the copy` };
}

/**
 * What verify compares of one record type (docs/design.md §7): its record table as declared, the
 * row its writer makes of a list item, and its child tables; the comparison itself is one for all.
 */
export interface Compared<I, P> {
  /** The record table's name and declaration: every declared column is compared (but SKIPPED). */
  readonly table: string;
  readonly decl: TableDecl;
  /** The item converted as the writer converts a copy; throws for one the mirror cannot store (the sync quarantines it). */
  prepare(item: I, syncedAt: string): P;
  row(p: P): Record<string, unknown>;
  /** Each child table with the rows the item gives it. */
  readonly children: readonly { readonly spec: ChildTable; rows(p: P): readonly ChildRow[] }[];
  /**
   * A child table the list item does not carry (a ticket's messages), compared against what the
   * stored row holds of it (the stored copy): its stored rows and the record's row go in.
   */
  readonly unlisted?: {
    readonly spec: ChildTable;
    difference(row: Record<string, unknown>, stored: Map<string, Record<string, unknown>> | undefined): ContentDifference | null;
  };
}

/**
 * What differs between the mirror's copy of these records and their list items: every declared
 * column of the record table, the rows of each child table, and what `unlisted` compares. Items
 * the mirror cannot convert are left to the sync, which quarantines them. No request is made.
 */
export async function recordDifferences<I extends { id: string }, P>(
  db: Db,
  compared: Compared<I, P>,
  items: readonly I[],
  syncedAt: string,
): Promise<Map<string, ContentDifference[]>> {
  const ids = items.map((t) => t.id);
  const columns = Object.keys(compared.decl.columns);
  const kinds = kindsOf(compared.decl);
  const stored = await storedById(db, columns, compared.table, ids);
  const children = [];
  for (const c of compared.children) children.push({ ...c, have: await storedChildren(db, c.spec, ids) });
  const unlisted = compared.unlisted ? await storedChildren(db, compared.unlisted.spec, ids) : null;
  const out = new Map<string, ContentDifference[]>();
  for (const item of items) {
    const row = stored.get(item.id);
    if (!row) continue;
    let p: P;
    try {
      p = compared.prepare(item, syncedAt);
    } catch {
      continue;
    }
    const diffs = rowDifferences(columns, row, compared.row(p), kinds);
    for (const c of children) {
      const d = childDifference(c.spec, c.rows(p), c.have.get(item.id));
      if (d) diffs.push(d);
    }
    const u = compared.unlisted?.difference(row, unlisted?.get(item.id));
    if (u) diffs.push(u);
    if (diffs.length > 0) out.set(item.id, diffs);
  }
  return out;
}

/**
 * Tickets: every column the mirror stores from the item, the tags and custom fields, and the
 * message rows against the messages of the stored copy (`raw_json`, as written: a list item
 * carries none).
 */
export const TICKET_COMPARED: Compared<Ticket, PreparedTicket> = {
  table: 'tickets',
  decl: TABLES.tickets,
  prepare: (item, syncedAt) => prepareTicket({ ...item, messages: [] }, syncedAt),
  row: (p) => p.row,
  children: [
    { spec: TAGS, rows: (p) => p.tags },
    { spec: TICKET_FIELDS, rows: (p) => p.fields },
  ],
  unlisted: { spec: MESSAGES, difference: (row, stored) => messageDifference(row.raw_json, stored) },
};

/** The message rows against the messages of the stored copy, which the mirror wrote them from. */
function messageDifference(raw: unknown, stored: Map<string, Record<string, unknown>> | undefined): ContentDifference | null {
  let copy: unknown;
  try {
    copy = typeof raw === 'string' ? (JSON.parse(raw) as { messages?: unknown }).messages : undefined;
  } catch {
    copy = undefined;
  }
  if (!Array.isArray(copy)) return { what: MESSAGES.table, expected: 'the stored copy lists its messages', found: 'raw_json holds none' };
  let rows: ChildRow[];
  try {
    rows = messageRows(copy as Parameters<typeof messageRows>[0]);
  } catch {
    return { what: MESSAGES.table, expected: 'messages the mirror can store', found: 'raw_json holds one it cannot' };
  }
  return childDifference(MESSAGES, rows, stored);
}

/** The stored rows of `table` with these ids, by id. */
async function storedById(
  db: Db,
  columns: readonly string[],
  table: string,
  ids: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  return new Map((await selectIn<Record<string, unknown>>(db, columns, table, 'id', ids)).map((r) => [String(r.id), r] as const));
}

/** Deals: every stored column, the contacts (primary flag, position) and custom fields. */
export const DEAL_COMPARED: Compared<Deal, PreparedDeal> = {
  table: 'deals',
  decl: TABLES.deals,
  prepare: prepareDeal,
  row: (p) => p.row,
  children: [
    { spec: CONTACTS, rows: (p) => p.contactRows },
    { spec: DEAL_FIELDS, rows: (p) => p.fields },
  ],
};

/** A pipeline or stage the mirror holds differently from the pipeline list, or not at all. */
export interface PipelineDifference extends ContentDifference {
  entityType: 'pipeline' | 'stage';
  entityId: string;
  missing: boolean;
}

/**
 * The pipelines and stages the list shows against the mirror's rows (name, deal count and list
 * position of each pipeline; pipeline, name, position and won/lost flags of each stage). Stages
 * no longer listed stay in the mirror by design (docs/schema.md) and are not a difference.
 */
export async function pipelineDifferences(db: Db, pipelines: readonly Pipeline[]): Promise<PipelineDifference[]> {
  const rows = new Map(
    (await db.selectFrom('pipelines').select(['id', 'name', 'deal_count', 'position']).execute()).map((r) => [r.id, r] as const),
  );
  const stages = new Map(
    (await db.selectFrom('stages').select(['id', 'pipeline_id', 'name', 'position', 'is_won', 'is_lost']).execute()).map(
      (r) => [r.id, r] as const,
    ),
  );
  const out: PipelineDifference[] = [];
  pipelines.forEach((p, i) => {
    const mine = rows.get(p.id);
    const want = { name: str(p.name), deal_count: p.dealCount, position: i };
    if (!mine) out.push({ entityType: 'pipeline', entityId: p.id, missing: true, what: 'pipelines', expected: 'listed', found: 'no row' });
    else
      for (const d of rowDifferences(Object.keys(want), mine, want))
        out.push({ entityType: 'pipeline', entityId: p.id, missing: false, ...d });
    (Array.isArray(p.stages) ? p.stages : []).forEach((s, j) => {
      const stage = stages.get(s.id);
      const expected = {
        pipeline_id: p.id,
        name: str(s.name),
        position: typeof s.position === 'number' ? s.position : j,
        is_won: bool(s.isWon),
        is_lost: bool(s.isLost),
      };
      if (!stage) out.push({ entityType: 'stage', entityId: s.id, missing: true, what: 'stages', expected: 'listed', found: 'no row' });
      else
        for (const d of rowDifferences(Object.keys(expected), stage, expected))
          out.push({ entityType: 'stage', entityId: s.id, missing: false, ...d });
    });
  });
  return out;
}
