import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../../migrations/index.js';

const DIR = join(import.meta.dirname, '..', '..', 'migrations');
/** What a migration may import: the query builder, Node itself, and its own folder (docs/design.md §5). */
const ALLOWED = /^(kysely|node:[a-z/_]+|\.\/[^/]+)$/;

function imports(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      found.push(arg && ts.isStringLiteral(arg) ? arg.text : '(computed)');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('migrations', () => {
  it('import nothing from src/: a migration never changes when the code around it does', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
    const bad = files.flatMap((f) =>
      imports(join(DIR, f))
        .filter((s) => s !== '(computed)' && !ALLOWED.test(s))
        .map((s) => `${f}: ${s}`),
    );
    expect(files.length).toBeGreaterThan(10);
    expect(bad).toEqual([]);
  });

  it('are every NNNN_name file of the folder, in name order', async () => {
    const files = readdirSync(DIR)
      .filter((f) => /^\d{4}_[a-z0-9_]+\.ts$/.test(f))
      .map((f) => f.slice(0, -3))
      .sort();
    expect(Object.keys(await loadMigrations())).toEqual(files);
  });
});
