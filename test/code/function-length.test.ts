import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** The code habit "functions < 80 lines" (BRIEF standards; docs/design.md), checked over src/ by the compiler's own parse. */
const MAX_LINES = 80;
const ROOT = join(import.meta.dirname, '..', '..');
/** The simulator's data generators build long literal tables of plausible data: exempt by design. */
const EXEMPT = /^src\/simulator\/(generator|generate-[a-z-]+)\.ts$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every function-like node (declarations, methods, arrows, function expressions) longer than MAX_LINES. */
function longFunctions(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      if (lines > MAX_LINES) found.push(`${relative(ROOT, path)}:${first + 1} ${name}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('code habits', () => {
  it(`no function in src/ is over ${MAX_LINES} lines, outside the simulator's data generators`, () => {
    const files = sourceFiles(join(ROOT, 'src')).filter((p) => !EXEMPT.test(relative(ROOT, p)));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap(longFunctions)).toEqual([]);
  });
});
