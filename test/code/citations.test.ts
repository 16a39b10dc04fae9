import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DIRS = ['src', 'test', 'bench', 'migrations'];
/** `docs/sync.md, "Hostile upstream"`: a document of the repository and a section of it. */
const CITATION = /(docs\/[a-z0-9-]+\.md), "([^"]+)"/g;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : files(path);
    return /\.(ts|mjs|js)$/.test(e.name) ? [path] : [];
  });
}

/** The places a section can be named: its heading, or the bold lead of its paragraph. */
function sections(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const headings = text
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .map((l) => l.replace(/^#+\s*/, ''));
  const leads = [...text.matchAll(/\*\*([^*]+?)\.?\*\*/g)].map((m) => m[1]!);
  return [...headings, ...leads].map((s) => s.toLowerCase());
}

describe('the repository stands alone', () => {
  it('every cited document exists and holds the cited section (a heading or a paragraph lead)', () => {
    const cache = new Map<string, string[]>();
    const broken: string[] = [];
    let seen = 0;
    for (const file of DIRS.flatMap((d) => files(join(ROOT, d)))) {
      for (const [, doc, cited] of readFileSync(file, 'utf8').matchAll(CITATION)) {
        seen++;
        // A citation may wrap across comment lines.
        const section = cited!.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, ' ');
        const where = `${relative(ROOT, file)}: ${doc}, "${section}"`;
        if (!existsSync(join(ROOT, doc!))) {
          broken.push(`${where} (no such document)`);
          continue;
        }
        if (!cache.has(doc!)) cache.set(doc!, sections(doc!));
        if (!cache.get(doc!)!.some((s) => s.includes(section.toLowerCase()))) broken.push(where);
      }
    }
    expect(seen).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
