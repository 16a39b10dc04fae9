import { inspect } from 'node:util';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { loadMigrations } from '../../migrations/index.js';
import { StoreError } from './errors.js';
import type { MirrorDatabase } from './schema.js';

/** Serves the migrations of the migrations/ folder (migrations/index.ts reads it once). */
class FolderMigrationProvider implements MigrationProvider {
  getMigrations(): Promise<Record<string, Migration>> {
    return loadMigrations();
  }
}

/**
 * `schema` (PostgreSQL) keeps Kysely's bookkeeping tables inside the mirror's own schema: without
 * it the Migrator finds another mirror's kysely_migration in a sibling schema and believes its
 * own schema is already migrated.
 */
function migrator(db: Kysely<MirrorDatabase>, schema?: string): Migrator {
  return new Migrator({ db, provider: new FolderMigrationProvider(), ...(schema ? { migrationTableSchema: schema } : {}) });
}

/**
 * Migrations recorded in the database that this build does not know: the schema was upgraded by a
 * newer wsmirror. Writing with the old code could corrupt it, so the caller refuses to start.
 */
export async function unknownAppliedMigrations(db: Kysely<MirrorDatabase>, schema?: string): Promise<string[]> {
  let names: string[];
  try {
    const table = schema ? sql.table(`${schema}.kysely_migration`) : sql.table('kysely_migration');
    const rows = await sql<{ name: string }>`select name from ${table}`.execute(db);
    names = rows.rows.map((r) => r.name);
  } catch {
    return []; // no bookkeeping table yet: a fresh mirror
  }
  const known = await loadMigrations();
  return names.filter((n) => !(n in known));
}

export function schemaNewerError(label: string, unknown: string[]): StoreError {
  return new StoreError(
    'SCHEMA_NEWER',
    `The mirror at ${label} was migrated by a newer wsmirror (unknown migration(s): ${unknown.join(', ')}); upgrade wsmirror to that version or newer before starting it again.`,
  );
}

/** Applies pending migrations; Kysely's Migrator reports failure in its result, it never throws. */
export async function migrateToLatest(db: Kysely<MirrorDatabase>, schema?: string): Promise<{ applied: string[] }> {
  const { error, results } = await migrator(db, schema).migrateToLatest();
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  if (error !== undefined) {
    const failed = (results ?? []).find((r) => r.status === 'Error')?.migrationName;
    const detail = error instanceof Error ? error.message : inspect(error);
    throw new StoreError(
      'MIGRATION_FAILED',
      failed
        ? `Migration ${failed} failed (${detail}); pending migrations were rolled back together. Fix the cause and run \`wsmirror migrate\` again.`
        : `Migrations could not run (${detail}). Check that the database is reachable and writable, then run \`wsmirror migrate\` again.`,
      { cause: error },
    );
  }
  return { applied };
}

/** Names of migrations not yet applied (read-only: creates nothing). */
/** How many migrations this build knows. */
export async function migrationCount(db: Kysely<MirrorDatabase>, schema?: string): Promise<number> {
  return (await migrator(db, schema).getMigrations()).length;
}

export async function pendingMigrations(db: Kysely<MirrorDatabase>, schema?: string): Promise<string[]> {
  const infos = await migrator(db, schema).getMigrations();
  return infos.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
