import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { QUICK_TESTS } from '../quick.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** Folders of test/ that hold helpers, not tests of an area. */
const NOT_AREAS = new Set(['helpers', 'reporters']);

describe("npm test's quick selection (test/quick.ts)", () => {
  it('names only files that exist', () => {
    const missing = QUICK_TESTS.filter((p) => !p.includes('*') && !existsSync(join(ROOT, p)));
    expect(missing).toEqual([]);
  });

  it('has a scenario from every area of test/', () => {
    const areas = readdirSync(join(ROOT, 'test')).filter(
      (name) => !NOT_AREAS.has(name) && statSync(join(ROOT, 'test', name)).isDirectory() && hasTests(join(ROOT, 'test', name)),
    );
    const covered = new Set(QUICK_TESTS.map((p) => p.split('/')[1]).filter((p) => p !== undefined));
    expect(areas.filter((a) => !covered.has(a))).toEqual([]);
  });
});

function hasTests(dir: string): boolean {
  return readdirSync(dir, { recursive: true }).some((f) => String(f).endsWith('.test.ts'));
}
