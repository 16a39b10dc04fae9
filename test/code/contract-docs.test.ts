import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TableDecl } from '../../src/entities/table-decl.js';
import { RECORD_ENTITIES } from '../../src/entities/index.js';
import { DECLARED_TABLES } from '../../src/store/tables-sync.js';
import { REPORT_TABLES } from '../../src/report/tables.js';

/*
 * The two contract pages an entity changes (docs/design.md §7), held to the declarations: a table
 * or a column the mirror declares and docs/schema.md does not name, or a list or read of a
 * built-in type docs/upstream.md does not list among the endpoints read, fails here, so the pages
 * are named by a test rather than found by reading.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const read = (doc: string) => readFileSync(join(ROOT, doc), 'utf8');

const identifiers = (text: string) => [...text.matchAll(/[a-z_][a-z0-9_]*/g)].map((m) => m[0]);

/** The names a part of the page gives: those in backticks, and the first cell of each table row (`| a, b / c |`). */
function namedIn(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/`([^`]+)`/g)) identifiers(m[1]!).forEach((i) => out.add(i));
  for (const m of text.matchAll(/^\|([^|]+)\|/gm)) identifiers(m[1]!).forEach((i) => out.add(i));
  return out;
}

interface Part {
  /** The tables it documents: named in its heading, or the one its bullet or bold lead opens with. */
  tables: string[];
  text: string;
}

/** docs/schema.md's parts: each section (`## x`, `### a / b`), and each bullet (`` - `x` ``) or bold lead (`**… x**`) in one. */
export function schemaParts(doc: string): Part[] {
  const parts: Part[] = [];
  for (const section of doc.split(/^#{2,3} /m).slice(1)) {
    parts.push({ tables: identifiers(section.split('\n')[0]!), text: section });
    for (const b of section.matchAll(/^- `([a-z0-9_]+)`[\s\S]*?(?=^- |(?![\s\S]))/gm)) parts.push({ tables: [b[1]!], text: b[0] });
    for (const b of section.matchAll(/^\*\*[^*]*?\b([a-z0-9_]+)\*\*[\s\S]*?(?=^\*\*|(?![\s\S]))/gm))
      parts.push({ tables: [b[1]!], text: b[0] });
  }
  return parts;
}

/** Every declared table the page has no part for, and every column its part does not name; empty when all are documented. */
export function undocumented(doc: string, tables: Readonly<Record<string, TableDecl>>): string[] {
  const parts = schemaParts(doc);
  const out: string[] = [];
  for (const [table, decl] of Object.entries(tables)) {
    const part = parts.find((p) => p.tables.includes(table));
    if (!part) {
      out.push(`${table}: declared, no section of docs/schema.md names it`);
      continue;
    }
    const named = namedIn(part.text);
    for (const column of Object.keys(decl.columns))
      if (!named.has(column)) out.push(`${table}.${column}: declared, not named in its part of docs/schema.md`);
  }
  return out;
}

/** The endpoint rows docs/upstream.md's "Endpoints read" lacks for each entity's list and read by id; empty when all are there. */
export function unlistedEndpoints(doc: string, entities: readonly { list: { path: string }; single: { collection: string } }[]): string[] {
  const section = doc.split(/^## /m).find((s) => s.startsWith('Endpoints read')) ?? '';
  const rows = section.split('\n').filter((l) => l.startsWith('| `GET '));
  const out: string[] = [];
  for (const e of entities) {
    const list = `GET ${e.list.path.replace(/^\/api\/v1/, '')}?limit&cursor`;
    const single = `GET /${e.single.collection}/:id`;
    for (const endpoint of [list, single])
      if (!rows.some((r) => r.startsWith(`| \`${endpoint}\``)))
        out.push(`${endpoint}: read by wsmirror, not in docs/upstream.md, "Endpoints read"`);
  }
  return out;
}

describe('the contract pages name what the mirror declares', () => {
  const schema = read('docs/schema.md');
  const upstream = read('docs/upstream.md');
  const declared = { ...DECLARED_TABLES, ...REPORT_TABLES };

  it('docs/schema.md documents every declared table and each of its columns', () => {
    expect(Object.keys(declared)).toEqual(expect.arrayContaining(['tickets', 'deal_history', 'dirty', 'rpt_deals']));
    expect(undocumented(schema, declared)).toEqual([]);
  });

  it("docs/upstream.md lists every built-in type's list and read by id among the endpoints read", () => {
    expect(RECORD_ENTITIES.map((e) => e.type)).toEqual(expect.arrayContaining(['ticket', 'deal']));
    expect(unlistedEndpoints(upstream, RECORD_ENTITIES)).toEqual([]);
  });

  it('sees a table, a column and an endpoint the pages leave out', () => {
    const { ticket_tags: tags, tickets } = DECLARED_TABLES;
    const without = schema.replace(/^### ticket_tags\n/m, '### the tags\n').replace(/^\| cc_json \|.*\n/m, '');
    expect(undocumented(without, { tickets, ticket_tags: tags })).toEqual([
      'tickets.cc_json: declared, not named in its part of docs/schema.md',
      'ticket_tags: declared, no section of docs/schema.md names it',
    ]);
    const none = { list: { path: '/api/v1/no_such_list' }, single: { collection: 'no_such_list' } };
    expect(unlistedEndpoints(upstream, [...RECORD_ENTITIES, none])).toEqual([
      'GET /no_such_list?limit&cursor: read by wsmirror, not in docs/upstream.md, "Endpoints read"',
      'GET /no_such_list/:id: read by wsmirror, not in docs/upstream.md, "Endpoints read"',
    ]);
  });
});
