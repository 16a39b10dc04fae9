import type { Kysely } from 'kysely';
import type { Company, ContactRef, UserRef } from '../api/index.js';
import type { MirrorDatabase } from './schema.js';
import { str, uniqueBy } from './values.js';
import { coalesceInto, insertRows, insertStatement } from './sql.js';

type Db = Kysely<MirrorDatabase>;

// References are partial views of a record (an actor may come without an email), so a null never
// erases a value the mirror already knows; a non-null value always wins.
// Rows are written in id order: concurrent PostgreSQL transactions (the drain re-reads several
// records at once) then lock shared users/contacts/companies in one order and cannot deadlock.
const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

// Every column is text: a batch's references go as one statement of arrays where the dialect binds them (sql.ts).
const text = (n: number) => Array<string>(n).fill('text');
const USERS = insertStatement('users', ['id', 'name', 'email'], coalesceInto('users', ['name', 'email']), text(3));
const CONTACTS = insertStatement(
  'contacts',
  ['id', 'first_name', 'last_name', 'email'],
  coalesceInto('contacts', ['first_name', 'last_name', 'email']),
  text(4),
);
const COMPANIES = insertStatement('companies', ['id', 'name', 'domain'], coalesceInto('companies', ['name', 'domain']), text(3));

export async function upsertUsers(db: Db, refs: readonly (UserRef | null | undefined)[]): Promise<void> {
  const rows = uniqueBy(
    refs.filter((r): r is UserRef => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  )
    .map((r) => ({ id: String(r.id), name: str(r.name), email: str(r.email) }))
    .sort(byId);
  if (rows.length === 0) return;
  await insertRows(
    db,
    USERS,
    rows.map((r) => [r.id, r.name, r.email]),
  );
}

export async function upsertContacts(db: Db, refs: readonly (ContactRef | null | undefined)[]): Promise<void> {
  const rows = uniqueBy(
    refs.filter((r): r is ContactRef => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  )
    .map((r) => ({ id: String(r.id), first_name: str(r.firstName), last_name: str(r.lastName), email: str(r.email) }))
    .sort(byId);
  if (rows.length === 0) return;
  await insertRows(
    db,
    CONTACTS,
    rows.map((r) => [r.id, r.first_name, r.last_name, r.email]),
  );
}

export async function upsertCompanies(db: Db, refs: readonly (Company | null | undefined)[]): Promise<void> {
  const rows = uniqueBy(
    refs.filter((r): r is Company => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  )
    .map((r) => ({ id: String(r.id), name: str(r.name), domain: str(r.domain) }))
    .sort(byId);
  if (rows.length === 0) return;
  await insertRows(
    db,
    COMPANIES,
    rows.map((r) => [r.id, r.name, r.domain]),
  );
}
