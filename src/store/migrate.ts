import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { migrations } from '../../migrations/index.js';
import { StoreError } from './errors.js';

/** Serves the static migration list, so no directory scan is needed in source or dist. */
class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: new StaticMigrationProvider() });
}

/** Applies pending migrations; Kysely's Migrator reports failure in its result, it never throws. */
export async function migrateToLatest(db: Kysely<any>): Promise<{ applied: string[] }> {
  const { error, results } = await migrator(db).migrateToLatest();
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  if (error !== undefined) {
    const failed = (results ?? []).find((r) => r.status === 'Error')?.migrationName;
    const detail = error instanceof Error ? error.message : String(error);
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
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const infos = await migrator(db).getMigrations();
  return infos.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
