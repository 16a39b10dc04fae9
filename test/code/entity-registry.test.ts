import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RECORD_ENTITIES } from '../../src/entities/index.js';

/*
 * An entity declared in a module of src/entities is mirrored only once BUILT_IN
 * (src/entities/index.ts) lists it: a module that declares one and is not listed fails here, so
 * the list is named by a test (docs/design.md §7), not found by reading.
 */

const DIR = join(import.meta.dirname, '..', '..', 'src', 'entities');

/** What makes an export an entity declaration: the fields every `RecordEntity` has. */
const isEntity = (v: unknown): v is { type: string } =>
  typeof v === 'object' && v !== null && ['type', 'list', 'single', 'tables', 'tracked', 'fromList'].every((k) => k in v);

/** Each entity a module of src/entities exports, as `file: type`, that the registry does not hold. */
function unlisted(modules: Record<string, Record<string, unknown>>, registry: readonly unknown[]): string[] {
  return Object.entries(modules).flatMap(([file, exports]) =>
    Object.values(exports)
      .filter(isEntity)
      .filter((e) => !registry.includes(e))
      .map((e) => `src/entities/${file} declares ${e.type}, which BUILT_IN (src/entities/index.ts) does not list`),
  );
}

async function entityModules(): Promise<Record<string, Record<string, unknown>>> {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const loaded = await Promise.all(
    files.map(async (f) => [f, (await import(pathToFileURL(join(DIR, f)).href)) as Record<string, unknown>]),
  );
  return Object.fromEntries(loaded);
}

describe('the built-in entities', () => {
  it('every entity a module of src/entities declares is in the registry', async () => {
    const modules = await entityModules();
    const found = Object.values(modules).flatMap((m) => Object.values(m).filter(isEntity));
    expect(found.map((e) => e.type)).toEqual(expect.arrayContaining(['ticket', 'deal']));
    expect(unlisted(modules, RECORD_ENTITIES)).toEqual([]);
  });

  it('sees a declared entity the registry does not hold', async () => {
    const modules = await entityModules();
    const registry = RECORD_ENTITIES.filter((e) => e.type !== 'deal');
    expect(unlisted(modules, registry)).toEqual([
      'src/entities/deal.ts declares deal, which BUILT_IN (src/entities/index.ts) does not list',
    ]);
  });
});
