import type pg from 'pg';
import { FLEET_SCHEMA, VIEWS_SCHEMA } from './config.js';

/** Tables of a workspace schema that are internal bookkeeping, not the contract BI reads. */
const INTERNAL = new Set(['sync_state', 'dirty']);
const isContractTable = (name: string) => !INTERNAL.has(name) && !name.startsWith('kysely_') && !name.startsWith('_');

/**
 * Rebuilds the cross-workspace schema: one view per contract table (the base tables and the `rpt_`
 * tables) with a leading `workspace_id`, a UNION ALL over every migrated workspace that has it. Runs
 * inside the caller's transaction (the one that adds or removes a workspace), so a reader sees the
 * old set of views or the new one, never a mix. Columns are those every schema shares, in the first
 * schema's order: during a rolling upgrade a schema one migration behind still unions cleanly.
 */
export async function rebuildViews(c: pg.PoolClient): Promise<void> {
  const { rows: spaces } = await c.query<{ id: string; schema_name: string }>(
    `select w.id, w.schema_name from ${FLEET_SCHEMA}.workspaces w
      where w.migrated and exists (select 1 from pg_namespace n where n.nspname = w.schema_name) order by w.id`,
  );
  await c.query(`drop schema if exists ${VIEWS_SCHEMA} cascade`);
  await c.query(`create schema ${VIEWS_SCHEMA}`);
  if (spaces.length === 0) return;
  const { rows: cols } = await c.query<{ schema: string; table: string; column: string }>(
    `select table_schema as schema, table_name as table, column_name as column
       from information_schema.columns where table_schema = any($1) order by table_schema, table_name, ordinal_position`,
    [spaces.map((s) => s.schema_name)],
  );
  const bySchemaTable = new Map<string, string[]>();
  for (const r of cols) {
    if (!isContractTable(r.table)) continue;
    const key = `${r.schema}.${r.table}`;
    const list = bySchemaTable.get(key) ?? [];
    list.push(r.column);
    bySchemaTable.set(key, list);
  }
  const tables = [...new Set(cols.map((r) => r.table).filter(isContractTable))].sort();
  for (const table of tables) await c.query(viewSql(table, spaces, bySchemaTable));
}

function viewSql(table: string, spaces: Array<{ id: string; schema_name: string }>, columns: Map<string, string[]>): string {
  const having = spaces.filter((s) => columns.has(`${s.schema_name}.${table}`));
  const first = columns.get(`${having[0]!.schema_name}.${table}`)!;
  const shared = first.filter((col) => having.every((s) => columns.get(`${s.schema_name}.${table}`)!.includes(col)));
  const list = shared.map(ident).join(', ');
  const parts = having.map((s) => `select ${literal(s.id)}::text as workspace_id, ${list} from ${ident(s.schema_name)}.${ident(table)}`);
  return `create view ${VIEWS_SCHEMA}.${ident(table)} as\n${parts.join('\nunion all\n')}`;
}

export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
