import type { Kysely } from 'kysely';
import type { Company, ContactRef, UserRef } from '../api/types.js';
import type { MirrorDatabase } from './schema.js';
import { chunks, str, uniqueBy } from './values.js';

type Db = Kysely<MirrorDatabase>;

// References are partial views of a record (an actor may come without an email), so a null never
// erases a value the mirror already knows; a non-null value always wins.
// Rows are written in id order: concurrent PostgreSQL transactions (the drain re-reads several
// records at once) then lock shared users/contacts/companies in one order and cannot deadlock.
const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export async function upsertUsers(db: Db, refs: readonly (UserRef | null | undefined)[]): Promise<void> {
  const rows = uniqueBy(
    refs.filter((r): r is UserRef => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  ).map((r) => ({ id: String(r.id), name: str(r.name), email: str(r.email) })).sort(byId);
  for (const batch of chunks(rows, 200)) {
    await db
      .insertInto('users')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          name: eb.fn.coalesce(eb.ref('excluded.name'), eb.ref('users.name')),
          email: eb.fn.coalesce(eb.ref('excluded.email'), eb.ref('users.email')),
        })),
      )
      .execute();
  }
}

export async function upsertContacts(db: Db, refs: readonly (ContactRef | null | undefined)[]): Promise<void> {
  const rows = uniqueBy(
    refs.filter((r): r is ContactRef => !!r && r.id !== null && r.id !== undefined),
    (r) => String(r.id),
  ).map((r) => ({ id: String(r.id), first_name: str(r.firstName), last_name: str(r.lastName), email: str(r.email) })).sort(byId);
  for (const batch of chunks(rows, 200)) {
    await db
      .insertInto('contacts')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          first_name: eb.fn.coalesce(eb.ref('excluded.first_name'), eb.ref('contacts.first_name')),
          last_name: eb.fn.coalesce(eb.ref('excluded.last_name'), eb.ref('contacts.last_name')),
          email: eb.fn.coalesce(eb.ref('excluded.email'), eb.ref('contacts.email')),
        })),
      )
      .execute();
  }
}

export async function upsertCompany(db: Db, company: Company | null | undefined): Promise<void> {
  if (!company || company.id === null || company.id === undefined) return;
  await db
    .insertInto('companies')
    .values({ id: String(company.id), name: str(company.name), domain: str(company.domain) })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        name: eb.fn.coalesce(eb.ref('excluded.name'), eb.ref('companies.name')),
        domain: eb.fn.coalesce(eb.ref('excluded.domain'), eb.ref('companies.domain')),
      })),
    )
    .execute();
}
