import type { Kysely } from 'kysely';
import type { Deal, Pipeline } from '../api/index.js';
import type { DealsTable, MirrorDatabase } from './schema.js';
import { upsertCompany, upsertContacts, upsertUsers } from './refs.js';
import { diffFields, writeObservedDealHistory } from './history.js';
import type { UpsertResult } from './tickets.js';
import { replaceChildren, type ChildRow, type ChildTable } from './children.js';
import { insertRows, insertStatement, rowUpsert, run } from './sql.js';
import { bool, centsText, chunks, dateOnly, fieldRows, json, parseAmount, requiredTs, str, ts, uniqueBy } from './values.js';

type Db = Kysely<MirrorDatabase>;

// The amount is compared (and kept in history) as exact decimal text from amount_cents: the
// stored amount is a float in SQLite (REAL, so BI tools can sum it), a numeric string in PostgreSQL.
const TRACKED = [
  { column: 'stage_id', field: 'stage_id' },
  { column: 'amount', field: 'amount' },
  { column: 'close_date', field: 'close_date' },
  { column: 'owner_id', field: 'owner_id' },
  { column: 'status', field: 'status' },
] as const;

function dealRow(d: Deal, syncedAt: string): DealsTable {
  const { amount, cents } = parseAmount(d.amount);
  return {
    id: String(d.id),
    name: str(d.name),
    amount,
    amount_cents: cents,
    currency: str(d.currency),
    close_date: dateOnly(d.closeDate, 'closeDate'),
    status: str(d.status),
    pipeline_id: d.pipeline?.id != null ? String(d.pipeline.id) : null,
    stage_id: d.stage?.id != null ? String(d.stage.id) : null,
    owner_id: d.owner?.id != null ? String(d.owner.id) : null,
    company_id: d.company?.id != null ? String(d.company.id) : null,
    fields_json: json(d.fields ?? {}),
    created_at: ts(d.createdAt, 'createdAt'),
    updated_at: requiredTs(d.updatedAt, 'updatedAt'),
    deleted_at: null,
    synced_at: syncedAt,
    raw_json: json(d),
  };
}

// Column order for the upsert, which binds each value once and updates from `excluded`. The
// record type makes the compiler reject a column missing here.
const DEAL_COLUMNS = Object.keys({
  id: 0, name: 0, amount: 0, amount_cents: 0, currency: 0, close_date: 0, status: 0, pipeline_id: 0, stage_id: 0,
  owner_id: 0, company_id: 0, fields_json: 0, created_at: 0, updated_at: 0, deleted_at: 0, synced_at: 0, raw_json: 0,
} satisfies Record<keyof DealsTable, 0>) as (keyof DealsTable)[];
const writeDeal = rowUpsert('deals', DEAL_COLUMNS, ['stage_id', 'pipeline_id', 'owner_id', 'company_id']);
const PIPELINE_STUB = insertStatement('pipelines', ['id', 'name', 'deal_count', 'position', 'raw_json'], 'on conflict ("id") do nothing');
const STAGE_STUB = insertStatement('stages', ['id', 'pipeline_id', 'name', 'position', 'is_won', 'is_lost', 'raw_json'], 'on conflict ("id") do nothing');

const CONTACTS: ChildTable = { table: 'deal_contacts', parent: 'deal_id', key: 'contact_id', values: ['is_primary', 'position'] };
const FIELDS: ChildTable = { table: 'deal_fields', parent: 'deal_id', key: 'key', values: ['value_text', 'value_json'] };

const PREVIOUS = 'select "stage_id", "amount", "amount_cents", "close_date", "owner_id", "status", "pipeline_id", "company_id", "updated_at" from "deals" where "id" = ?';
type Previous = Pick<DealsTable, 'stage_id' | 'amount' | 'amount_cents' | 'close_date' | 'owner_id' | 'status' | 'pipeline_id' | 'company_id' | 'updated_at'>;

/**
 * Replaces the mirror's copy of one deal (same guarantees as upsertTicket: conversion before the
 * first write, stale copies ignored). An unknown stage or pipeline gets a minimal row from what
 * the deal carries, so joins work before the next pipeline read fills in the rest.
 */
export async function upsertDeal(db: Db, deal: Deal, syncedAt: string): Promise<UpsertResult> {
  const row = dealRow(deal, syncedAt);
  const id = row.id;
  const contacts = uniqueBy(Array.isArray(deal.contacts) ? deal.contacts : [], (c) => String(c.id));
  const contactRows: ChildRow[] = contacts.map((c, position) => [String(c.id), bool(c.isPrimary ?? false), position]);
  const fields: ChildRow[] = fieldRows(deal.fields).map((f) => [f.key, f.value_text, f.value_json]);

  await run(db, 'delete from "quarantine" where "entity_type" = \'deal\' and "entity_id" = ?', [id]);

  const [previous] = await run<Previous>(db, PREVIOUS, [id]);
  if (previous?.updated_at && String(previous.updated_at) > row.updated_at!) return { history: 0, stale: true, quarantined: false };

  await upsertUsers(db, [deal.owner]);
  await upsertCompany(db, deal.company);
  await upsertContacts(db, contacts);
  if (row.pipeline_id !== null) {
    await insertRows(db, PIPELINE_STUB, [[row.pipeline_id, str(deal.pipeline.name), null, null, null]]);
  }
  if (row.stage_id !== null) {
    const s = deal.stage;
    await insertRows(db, STAGE_STUB, [
      [row.stage_id, row.pipeline_id, str(s.name), typeof s.position === 'number' ? s.position : null, bool(s.isWon), bool(s.isLost), json(s)],
    ]);
  }

  await writeDeal(db, row, previous);

  const existed = previous !== undefined;
  await replaceChildren(db, CONTACTS, id, contactRows, existed);
  await replaceChildren(db, FIELDS, id, fields, existed);

  if (!previous) return { history: 0, stale: false, quarantined: false };
  const exact = (r: Previous) => ({ ...r, amount: centsText(r.amount_cents === null ? null : Number(r.amount_cents)) });
  const changes = diffFields(exact(previous), exact(row), TRACKED);
  const observedSince = previous.updated_at === null ? null : String(previous.updated_at);
  const history = await writeObservedDealHistory(db, id, changes, observedSince, row.updated_at!);
  return { history, stale: false, quarantined: false };
}

export interface UpsertPipelinesOptions {
  /** Position of the first pipeline given, for callers that page the list. Default 0. */
  startPosition?: number;
}

/**
 * Pipelines and their stages as listed upstream. Stages no longer listed are kept (deals and
 * history may still name them).
 */
export async function upsertPipelines(db: Db, pipelines: readonly Pipeline[], options: UpsertPipelinesOptions = {}): Promise<void> {
  const start = options.startPosition ?? 0;
  const rows = pipelines.map((p, i) => ({
    id: String(p.id),
    name: str(p.name),
    deal_count: typeof p.dealCount === 'number' ? p.dealCount : null,
    position: start + i,
    raw_json: json(p),
  }));
  for (const batch of chunks(uniqueBy(rows, (r) => r.id), 200)) {
    await db
      .insertInto('pipelines')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          name: eb.ref('excluded.name'),
          deal_count: eb.ref('excluded.deal_count'),
          position: eb.ref('excluded.position'),
          raw_json: eb.ref('excluded.raw_json'),
        })),
      )
      .execute();
  }
  const stages = uniqueBy(
    pipelines.flatMap((p) =>
      (Array.isArray(p.stages) ? p.stages : []).map((s, i) => ({
        id: String(s.id),
        pipeline_id: String(p.id),
        name: str(s.name),
        position: typeof s.position === 'number' ? s.position : i,
        is_won: bool(s.isWon),
        is_lost: bool(s.isLost),
        raw_json: json(s),
      })),
    ),
    (s) => s.id,
  );
  for (const batch of chunks(stages, 200)) {
    await db
      .insertInto('stages')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          pipeline_id: eb.ref('excluded.pipeline_id'),
          name: eb.ref('excluded.name'),
          position: eb.ref('excluded.position'),
          is_won: eb.ref('excluded.is_won'),
          is_lost: eb.ref('excluded.is_lost'),
          raw_json: eb.ref('excluded.raw_json'),
        })),
      )
      .execute();
  }
}
