import type { Kysely } from 'kysely';
import type { Company, ContactRef, Deal, Pipeline, UserRef } from '../api/index.js';
import type { DealsTable, MirrorDatabase, PipelinesTable, StagesTable } from './schema.js';
import { upsertCompanies, upsertContacts, upsertUsers } from './refs.js';
import { diffFields } from './history.js';
import { recordWrites } from './record-writes.js';
import { trackedFields } from './tracked-fields.js';
import type { ChildList, ChildRow, ChildTable } from './children.js';
import type { RecordKind } from './record-upsert.js';
import { insertRows, insertStatement, rowUpsert } from './sql.js';
import { columnsOf, jsonColumnsOf, valueColumnsOf } from '../entities/table-decl.js';
import { rowMapping, TABLES } from './tables.js';
import { SUPPORT_TABLES } from './tables-sync.js';
import { stageKey } from './reads.js';
import {
  bool,
  centsText,
  chunks,
  dateOnly,
  fieldRows,
  firstOfEach,
  foldRefs,
  json,
  parseAmount,
  requiredTs,
  str,
  ts,
  uniqueBy,
} from './values.js';

type Db = Kysely<MirrorDatabase>;

// The amount is compared (and kept in history) as exact decimal text from amount_cents: the
// stored amount is a float in SQLite (REAL, so BI tools can sum it), a numeric string in PostgreSQL.
const TRACKED = trackedFields('deal').map((f) => ({ column: f.field as keyof Previous, field: f.field }));

/** A deal's row: the mapping from the declaration of `deals` (src/entities/deal.ts); the amount parsed once for both its columns. */
const dealMapping = rowMapping<{ d: Deal; parsed: ReturnType<typeof parseAmount>; syncedAt: string }>()('deals', TABLES.deals, {
  id: ({ d }) => String(d.id),
  name: ({ d }) => str(d.name),
  amount: ({ parsed }) => parsed.amount,
  amount_cents: ({ parsed }) => parsed.cents,
  currency: ({ d }) => str(d.currency),
  close_date: ({ d }) => dateOnly(d.closeDate, 'closeDate'),
  status: ({ d }) => str(d.status),
  pipeline_id: ({ d }) => (d.pipeline?.id != null ? String(d.pipeline.id) : null),
  stage_id: ({ d }) => (d.stage?.id != null ? String(d.stage.id) : null),
  owner_id: ({ d }) => (d.owner?.id != null ? String(d.owner.id) : null),
  company_id: ({ d }) => (d.company?.id != null ? String(d.company.id) : null),
  fields_json: ({ d }) => json(d.fields ?? {}),
  created_at: ({ d }) => ts(d.createdAt, 'createdAt'),
  updated_at: ({ d }) => requiredTs(d.updatedAt, 'updatedAt'),
  deleted_at: () => null,
  synced_at: ({ syncedAt }) => syncedAt,
  raw_json: ({ d }) => json(d),
});

function dealRow(d: Deal, syncedAt: string): DealsTable {
  return dealMapping({ d, parsed: parseAmount(d.amount), syncedAt });
}

// The upsert binds each value once and updates from `excluded`; the columns are the declaration's.
export const DEAL_COLUMNS = columnsOf(TABLES.deals);
const writeDeal = rowUpsert('deals', DEAL_COLUMNS, ['stage_id', 'pipeline_id', 'owner_id', 'company_id']);
// A stub names a deal's pipeline or stage until the pipelines list is read: it never overwrites a row.
const PIPELINE_COLUMNS = columnsOf(SUPPORT_TABLES.pipelines);
const PIPELINE_STUB = insertStatement('pipelines', PIPELINE_COLUMNS, 'on conflict ("id") do nothing');
// Stages are keyed by (pipeline_id, id) since 0700_owner_keyed_children: two pipelines may share a stage id.
const STAGE_COLUMNS = columnsOf(SUPPORT_TABLES.stages);
const STAGE_STUB = insertStatement('stages', STAGE_COLUMNS, 'on conflict ("pipeline_id", "id") do nothing');

export const CONTACTS: ChildTable = {
  table: 'deal_contacts',
  parent: 'deal_id',
  key: 'contact_id',
  values: valueColumnsOf(TABLES.deal_contacts, 'deal_id', 'contact_id'),
};
export const FIELDS: ChildTable = {
  table: 'deal_fields',
  parent: 'deal_id',
  key: 'key',
  values: valueColumnsOf(TABLES.deal_fields, 'deal_id', 'key'),
  json: jsonColumnsOf(TABLES.deal_fields),
};

const PREVIOUS_COLUMNS = [
  'stage_id',
  'amount',
  'amount_cents',
  'currency',
  'close_date',
  'owner_id',
  'status',
  'pipeline_id',
  'company_id',
  'updated_at',
] as const;
type Previous = Pick<DealsTable, (typeof PREVIOUS_COLUMNS)[number]>;

/** One deal converted for writing: every value checked before the first write. */
export interface PreparedDeal {
  readonly row: DealsTable;
  readonly contacts: readonly ContactRef[];
  readonly contactRows: ChildRow[];
  readonly fields: ChildRow[];
  readonly owner: UserRef | null | undefined;
  readonly company: Company | null | undefined;
  /** The stub rows of the deal's pipeline and stage, when it names them. */
  readonly pipelineStub: PipelinesTable | null;
  readonly stageStub: StagesTable | null;
}

export function prepareDeal(deal: Deal, syncedAt: string): PreparedDeal {
  const row = dealRow(deal, syncedAt);
  const contacts = uniqueBy(Array.isArray(deal.contacts) ? deal.contacts : [], (c) => String(c.id));
  const s = deal.stage;
  return {
    row,
    contacts,
    contactRows: contacts.map((c, position) => [String(c.id), bool(c.isPrimary ?? false), position]),
    fields: fieldRows(deal.fields).map((f) => [f.key, f.value_text, f.value_json]),
    owner: deal.owner,
    company: deal.company,
    pipelineStub:
      row.pipeline_id === null
        ? null
        : { id: row.pipeline_id, name: str(deal.pipeline.name), deal_count: null, position: null, raw_json: null },
    // A listed deal always names its pipeline (src/api/schemas.ts): the second test only tells the compiler so.
    stageStub:
      row.stage_id === null || row.pipeline_id === null
        ? null
        : {
            id: row.stage_id,
            pipeline_id: row.pipeline_id,
            name: str(s.name),
            position: typeof s.position === 'number' ? s.position : null,
            is_won: bool(s.isWon),
            is_lost: bool(s.isLost),
            raw_json: json(s),
          },
  };
}

/**
 * The first stub of each key (`key` of a row: its id, or a stage's pipeline and id), as values in
 * the declared column order: a stub never overwrites a row, so the first one written stays.
 */
function stubs<R extends Record<C, unknown>, C extends string>(rows: readonly (R | null)[], key: (r: R) => string, columns: readonly C[]) {
  return uniqueBy(
    rows.filter((r): r is R => r !== null),
    key,
  ).map((r) => columns.map((c) => r[c]));
}

/** A deal's child tables, written in this order for new and re-read deals alike. */
const DEAL_CHILDREN: readonly ChildList<PreparedDeal>[] = [
  { table: CONTACTS, rows: (p) => p.contactRows },
  { table: FIELDS, rows: (p) => p.fields },
];

/** How a deal takes the one upsert path (record-upsert.ts): people, company and stubs, then contacts and fields. */
export const DEAL_KIND: RecordKind<Deal, PreparedDeal, Previous & { id: string }> = {
  entityType: 'deal',
  table: 'deals',
  prepare: (d, syncedAt) => prepareDeal(d, syncedAt),
  previousColumns: PREVIOUS_COLUMNS,
  async writeRefs(db, live) {
    await upsertUsers(db, foldRefs(live.map((p) => firstOfEach([p.owner]))));
    await upsertCompanies(db, foldRefs(live.map((p) => firstOfEach([p.company]))));
    await upsertContacts(db, foldRefs(live.map((p) => firstOfEach(p.contacts))));
    const pipelines = stubs(
      live.map((p) => p.pipelineStub),
      (r) => r.id,
      PIPELINE_COLUMNS,
    );
    if (pipelines.length > 0) await insertRows(db, PIPELINE_STUB, pipelines);
    const stages = stubs(
      live.map((p) => p.stageStub),
      (r) => stageKey(r.pipeline_id, r.id),
      STAGE_COLUMNS,
    );
    if (stages.length > 0) await insertRows(db, STAGE_STUB, stages);
  },
  ...recordWrites<PreparedDeal, Previous & { id: string }>('deal', writeDeal, DEAL_CHILDREN, (before, row) =>
    diffFields(exactAmount(before), exactAmount(row), TRACKED),
  ),
};

/**
 * A deal's row as its history compares it: the amount as its exact cents (`amount_cents`), the
 * one spelling the stored copy and a new read share, whatever the amount column's own text.
 */
export function exactAmount<R extends { amount_cents: unknown }>(r: R): R & { amount: string | null } {
  return { ...r, amount: centsText(r.amount_cents == null ? null : Number(r.amount_cents)) };
}

export interface UpsertPipelinesOptions {
  /** Position of the first pipeline given, for callers that page the list. Default 0. */
  startPosition?: number;
}

/**
 * Pipelines and their stages as listed upstream, a stage keyed by its pipeline and id (two
 * pipelines may share a stage id). Stages no longer listed are kept (deals and history may still
 * name them).
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
  for (const batch of chunks(
    uniqueBy(rows, (r) => r.id),
    200,
  )) {
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
    (s) => stageKey(s.pipeline_id, s.id),
  );
  for (const batch of chunks(stages, 200)) {
    await db
      .insertInto('stages')
      .values(batch)
      .onConflict((oc) =>
        oc.columns(['pipeline_id', 'id']).doUpdateSet((eb) => ({
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
