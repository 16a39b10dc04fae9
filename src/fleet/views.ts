import type pg from 'pg';
import { FLEET_SCHEMA, VIEWS_SCHEMA } from './config.js';

/** Tables of a workspace schema that are internal bookkeeping, not the contract BI reads. */
const INTERNAL = new Set(['sync_state', 'dirty']);
/**
 * The custom field tables' columns are each workspace's own keys, added by its own cycles: a fleet
 * view of them would go stale at every new key and lock those tables against the ALTER that adds
 * it. Across the fleet a custom field is read from `ticket_fields` / `deal_fields` (docs/fleet.md).
 */
const PER_WORKSPACE = /_custom_fields$/;
const isContractTable = (name: string) =>
  !INTERNAL.has(name) && !PER_WORKSPACE.test(name) && !name.startsWith('kysely_') && !name.startsWith('_');

/** A column of one workspace's table, with its type as PostgreSQL spells it (`format_type`). */
interface Column {
  name: string;
  type: string;
}

/**
 * Rebuilds the cross-workspace schema: one view per contract table (the base tables and the `rpt_`
 * tables) with a leading `workspace_id`, a UNION ALL over every migrated workspace that has it. Runs
 * inside the caller's transaction (the one that adds or removes a workspace), so a reader sees the
 * old set of views or the new one, never a mix. A view has every column any workspace's table has
 * (docs/fleet.md): NULL where a workspace lacks it (a schema one migration behind during a rolling
 * upgrade), and as text where the workspaces disagree on its type, so no value is lost and the
 * union always builds.
 */
export async function rebuildViews(c: pg.PoolClient): Promise<void> {
  const { rows: spaces } = await c.query<{ id: string; schema_name: string }>(
    `select w.id, w.schema_name from ${FLEET_SCHEMA}.workspaces w
      where w.migrated and exists (select 1 from pg_namespace n where n.nspname = w.schema_name) order by w.id`,
  );
  await c.query(`drop schema if exists ${VIEWS_SCHEMA} cascade`);
  await c.query(`create schema ${VIEWS_SCHEMA}`);
  if (spaces.length === 0) return;
  const { rows: cols } = await c.query<{ schema: string; table: string; column: string; type: string }>(
    `select n.nspname as schema, t.relname as table, a.attname as column, format_type(a.atttypid, a.atttypmod) as type
       from pg_attribute a join pg_class t on t.oid = a.attrelid join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = any($1) and t.relkind = 'r' and a.attnum > 0 and not a.attisdropped
      order by n.nspname, t.relname, a.attnum`,
    [spaces.map((s) => s.schema_name)],
  );
  const bySchemaTable = new Map<string, Column[]>();
  for (const r of cols) {
    if (!isContractTable(r.table)) continue;
    const key = `${r.schema}.${r.table}`;
    const list = bySchemaTable.get(key) ?? [];
    list.push({ name: r.column, type: r.type });
    bySchemaTable.set(key, list);
  }
  const tables = [...new Set(cols.map((r) => r.table).filter(isContractTable))].sort();
  for (const table of tables) await c.query(viewSql(table, spaces, bySchemaTable));
}

function viewSql(table: string, spaces: Array<{ id: string; schema_name: string }>, columns: Map<string, Column[]>): string {
  const having = spaces.filter((s) => columns.has(`${s.schema_name}.${table}`));
  const union = unionColumns(having.map((s) => columns.get(`${s.schema_name}.${table}`)!));
  const parts = having.map((s) => {
    const own = new Map(columns.get(`${s.schema_name}.${table}`)!.map((col) => [col.name, col.type]));
    const list = union.map((col) => {
      const type = own.get(col.name);
      if (type === undefined) return `null::${col.type} as ${ident(col.name)}`;
      return type === col.type ? ident(col.name) : `${ident(col.name)}::${col.type} as ${ident(col.name)}`;
    });
    return `select ${literal(s.id)}::text as workspace_id, ${list.join(', ')} from ${ident(s.schema_name)}.${ident(table)}`;
  });
  return `create view ${VIEWS_SCHEMA}.${ident(table)} as\n${parts.join('\nunion all\n')}`;
}

/** Every column of the tables, in first-seen order; a column whose type differs between them is text. */
function unionColumns(tables: readonly Column[][]): Column[] {
  const out = new Map<string, Column>();
  for (const table of tables) {
    for (const col of table) {
      const seen = out.get(col.name);
      if (seen === undefined) out.set(col.name, { ...col });
      else if (seen.type !== col.type) seen.type = 'text';
    }
  }
  return [...out.values()];
}

export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
