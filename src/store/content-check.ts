import type { Kysely } from 'kysely';
import type { Deal, Pipeline, Ticket } from '../api/index.js';
import { clipText } from '../api/index.js';
import { same, type ChildRow, type ChildTable } from './children.js';
import { CONTACTS, DEAL_COLUMNS, FIELDS as DEAL_FIELDS, prepareDeal } from './deals.js';
import { selectIn } from './key-sets.js';
import type { MirrorDatabase } from './schema.js';
import { FIELDS as TICKET_FIELDS, MESSAGES, messageRows, prepareTicket, TAGS, TICKET_COLUMNS } from './tickets.js';
import { jsonColumnsOf, TABLES } from './tables.js';
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
/** JSON columns compare by value (PostgreSQL's jsonb spells JSON its own way). */
const JSON_COLUMNS = new Set([...jsonColumnsOf(TABLES.tickets), ...jsonColumnsOf(TABLES.deals)]);

const shown = (v: unknown): string => clipText(v === null || v === undefined ? 'null' : typeof v === 'string' ? v : (json(v) ?? ''), 120);

/** Equal as stored: booleans as 0/1, JSON by value, an amount (REAL in SQLite, numeric in PostgreSQL) by number. */
function equalStored(column: string, stored: unknown, next: unknown): boolean {
  if (column === 'amount' && stored !== null && next !== null && stored !== undefined) return Number(stored) === Number(next);
  return same(stored, next, JSON_COLUMNS.has(column));
}

function rowDifferences(columns: readonly string[], stored: Record<string, unknown>, next: Record<string, unknown>): ContentDifference[] {
  return columns
    .filter((c) => !SKIPPED.has(c) && !equalStored(c, stored[c] ?? null, next[c] ?? null))
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
 * What differs between the mirror's copy of these tickets and their list items: every column the
 * mirror stores from the item, the tags and custom fields, and the message rows against the
 * messages of the stored copy (`raw_json`, as written: a list item carries none). Items the
 * mirror cannot convert are left to the sync, which quarantines them. No request is made.
 */
export async function ticketDifferences(db: Db, items: readonly Ticket[], syncedAt: string): Promise<Map<string, ContentDifference[]>> {
  const ids = items.map((t) => t.id);
  const stored = await storedById(db, TICKET_COLUMNS, 'tickets', ids);
  const tags = await storedChildren(db, TAGS, ids);
  const fields = await storedChildren(db, TICKET_FIELDS, ids);
  const messages = await storedChildren(db, MESSAGES, ids);
  const out = new Map<string, ContentDifference[]>();
  for (const item of items) {
    const row = stored.get(item.id);
    if (!row) continue;
    let p;
    try {
      p = prepareTicket({ ...item, messages: [] }, syncedAt);
    } catch {
      continue;
    }
    const diffs = rowDifferences(TICKET_COLUMNS, row, p.row);
    for (const [spec, rows, have] of [
      [TAGS, p.tags, tags],
      [TICKET_FIELDS, p.fields, fields],
    ] as const) {
      const d = childDifference(spec, rows, have.get(item.id));
      if (d) diffs.push(d);
    }
    const m = messageDifference(row.raw_json, messages.get(item.id));
    if (m) diffs.push(m);
    if (diffs.length > 0) out.set(item.id, diffs);
  }
  return out;
}

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

/** As ticketDifferences, for deals: every stored column, the contacts (primary flag, position) and custom fields. */
export async function dealDifferences(db: Db, items: readonly Deal[], syncedAt: string): Promise<Map<string, ContentDifference[]>> {
  const ids = items.map((d) => d.id);
  const stored = await storedById(db, DEAL_COLUMNS, 'deals', ids);
  const contacts = await storedChildren(db, CONTACTS, ids);
  const fields = await storedChildren(db, DEAL_FIELDS, ids);
  const out = new Map<string, ContentDifference[]>();
  for (const item of items) {
    const row = stored.get(item.id);
    if (!row) continue;
    let p;
    try {
      p = prepareDeal(item, syncedAt);
    } catch {
      continue;
    }
    const diffs = rowDifferences(DEAL_COLUMNS, row, p.row);
    for (const [spec, rows, have] of [
      [CONTACTS, p.contactRows, contacts],
      [DEAL_FIELDS, p.fields, fields],
    ] as const) {
      const d = childDifference(spec, rows, have.get(item.id));
      if (d) diffs.push(d);
    }
    if (diffs.length > 0) out.set(item.id, diffs);
  }
  return out;
}

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
