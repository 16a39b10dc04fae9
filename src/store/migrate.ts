import { inspect } from 'node:util';
import { Migrator, sql, type DatabaseIntrospector, type Kysely, type Migration, type MigrationProvider, type TableMetadata } from 'kysely';
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
  if (!schema) return new Migrator({ db, provider: new FolderMigrationProvider() });
  return new Migrator({ db: scopedToSchema(db, schema), provider: new FolderMigrationProvider(), migrationTableSchema: schema });
}

/**
 * The Migrator asks the introspector whether its two bookkeeping tables exist, and PostgreSQL's
 * introspector answers by reading every column of every table in every schema: in a fleet's
 * database each new workspace's first open read all the others' catalogs (1.7-1.9 s each at 120
 * schemas, O(workspaces²) over a fleet's start). The Migrator needs only the table names of its
 * own schema, so that is all this introspector reads (names only: it lists no columns).
 */
function scopedToSchema(db: Kysely<MirrorDatabase>, schema: string): Kysely<MirrorDatabase> {
  const introspection: DatabaseIntrospector = {
    getSchemas: () => db.introspection.getSchemas(),
    async getTables(): Promise<TableMetadata[]> {
      const { rows } = await sql<{ name: string; type: string }>`
        select table_name as name, table_type as type from information_schema.tables where table_schema = ${schema}`.execute(db);
      return rows.map((r) => ({ name: r.name, schema, isView: r.type === 'VIEW', columns: [] }));
    },
    async getMetadata(options) {
      return { tables: await this.getTables(options) };
    },
  };
  // Kysely's methods read private fields: they run on the real instance, only `introspection` differs.
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The names in the mirror's own bookkeeping table; null when it has none yet (a fresh mirror).
 * One read of one table: Kysely's Migrator first lists every column of every table in the
 * database (its introspector), which in a database holding many mirror schemas (a fleet) made
 * each open read them all: 10,000 rows per open at 20 workspaces, O(workspaces²) for a fleet's
 * round (docs/fleet.md, "Sizing").
 */
async function appliedNames(db: Kysely<MirrorDatabase>, schema?: string): Promise<string[] | null> {
  try {
    const table = schema ? sql.table(`${schema}.kysely_migration`) : sql.table('kysely_migration');
    const rows = await sql<{ name: string }>`select name from ${table}`.execute(db);
    return rows.rows.map((r) => r.name);
  } catch {
    return null; // no bookkeeping table yet: a fresh mirror
  }
}

/** What the mirror's schema holds against this build's migrations. */
export interface MigrationPlan {
  /** Applied migrations this build does not know: a newer wsmirror migrated the schema. */
  unknown: string[];
  /** This build's migrations not yet applied, in order. */
  pending: string[];
  /** How many migrations this build knows. */
  known: number;
}

/** The plan from the bookkeeping table alone, so an up-to-date mirror opens without the Migrator. */
export async function migrationPlan(db: Kysely<MirrorDatabase>, schema?: string): Promise<MigrationPlan> {
  const names = new Set((await appliedNames(db, schema)) ?? []);
  const known = Object.keys(await loadMigrations()).sort();
  return {
    unknown: [...names].filter((n) => !known.includes(n)),
    pending: known.filter((n) => !names.has(n)),
    known: known.length,
  };
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
