import type { Kysely } from 'kysely';
import type { Company, ContactRef, UserRef } from '../api/index.js';
import type { CompaniesTable, ContactsTable, MirrorDatabase, UsersTable } from './schema.js';
import { columnsOf, valueColumnsOf, type TableDecl } from '../entities/table-decl.js';
import { SUPPORT_TABLES } from './tables-sync.js';
import { str, uniqueBy } from './values.js';
import { coalesceInto, insertRows, insertStatement } from './sql.js';

type Db = Kysely<MirrorDatabase>;

// References are partial views of a record (an actor may come without an email), so a null never
// erases a value the mirror already knows; a non-null value always wins.
// Rows are written in id order: concurrent PostgreSQL transactions (the drain re-reads several
// records at once) then lock shared users/contacts/companies in one order and cannot deadlock.
const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * A reference table's upsert, in its declared columns (src/store/tables-sync.ts): every value but
 * the id kept by coalesce. Every column is text, so a batch's references go as one statement of
 * arrays where the dialect binds them (sql.ts); a declaration that adds another type fails here,
 * at load, not in a sync.
 */
function refUpsert(name: 'users' | 'contacts' | 'companies') {
  const table: TableDecl = SUPPORT_TABLES[name];
  const columns = columnsOf(table);
  const types = Object.entries(table.columns).map(([column, c]) => {
    if (c.type !== 'text') throw new Error(`${name}.${column} is declared ${c.type}: the reference upsert binds text only`);
    return 'text';
  });
  const statement = insertStatement(name, columns, coalesceInto(name, valueColumnsOf(table, 'id')), types);
  /** The rows' values in the declared column order. */
  const cells = (rows: readonly Record<string, unknown>[]) => rows.map((r) => columns.map((c) => r[c]));
  return { statement, cells };
}

const USERS = refUpsert('users');
const CONTACTS = refUpsert('contacts');
const COMPANIES = refUpsert('companies');

export async function upsertUsers(db: Db, refs: readonly (UserRef | null | undefined)[]): Promise<void> {
  const rows: UsersTable[] = uniqueBy(
    refs.filter((r): r is UserRef => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  )
    .map((r) => ({ id: String(r.id), name: str(r.name), email: str(r.email) }))
    .sort(byId);
  if (rows.length === 0) return;
  await insertRows(db, USERS.statement, USERS.cells(rows));
}

export async function upsertContacts(db: Db, refs: readonly (ContactRef | null | undefined)[]): Promise<void> {
  const rows: ContactsTable[] = uniqueBy(
    refs.filter((r): r is ContactRef => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  )
    .map((r) => ({ id: String(r.id), first_name: str(r.firstName), last_name: str(r.lastName), email: str(r.email) }))
    .sort(byId);
  if (rows.length === 0) return;
  await insertRows(db, CONTACTS.statement, CONTACTS.cells(rows));
}

export async function upsertCompanies(db: Db, refs: readonly (Company | null | undefined)[]): Promise<void> {
  const rows: CompaniesTable[] = uniqueBy(
    refs.filter((r): r is Company => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  )
    .map((r) => ({ id: String(r.id), name: str(r.name), domain: str(r.domain) }))
    .sort(byId);
  if (rows.length === 0) return;
  await insertRows(db, COMPANIES.statement, COMPANIES.cells(rows));
}
