import { readdirSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Migration } from 'kysely';

/** `0700_owner_keyed_children`: four digits, then the migration's name in snake case. */
const MIGRATION_NAME = /^\d{4}_[a-z0-9_]+$/;

let loaded: Promise<Record<string, Migration>> | undefined;

/**
 * Every migration in this folder, by name (the file's name without its extension), in the order
 * they apply (by name). A folder scan, so a new migration is one new file and nothing else
 * (docs/design.md §7, "Adding an entity"). Only files of this module's own extension are read:
 * `.ts` when run from source (vitest), `.js` from dist/ after tsc, never both; declaration and
 * map files do not match the name pattern.
 */
export function loadMigrations(): Promise<Record<string, Migration>> {
  loaded ??= (async () => {
    const self = fileURLToPath(import.meta.url);
    const ext = extname(self);
    const names = readdirSync(dirname(self))
      .filter((f) => extname(f) === ext && MIGRATION_NAME.test(f.slice(0, -ext.length)))
      .map((f) => f.slice(0, -ext.length))
      .sort();
    const entries = await Promise.all(
      names.map(async (name) => [name, (await import(new URL(`./${name}${ext}`, import.meta.url).href)) as Migration] as const),
    );
    return Object.fromEntries(entries);
  })();
  return loaded;
}
