/**
 * COPY for the PostgreSQL client. Many-row VALUES statements cost the server most of a
 * backfill's CPU in parsing, planning and binding their thousands of parameters; COPY streams the
 * same rows as text and the server only converts them (bench/README.md). The rows go to a
 * temporary staging table first, then one INSERT ... SELECT moves them with the statement's own
 * ON CONFLICT clause, so every upsert rule of the VALUES path holds unchanged. Rows that nothing
 * can conflict with (a first backfill's append) are copied straight into their table instead
 * (docs/sync.md, "Appended rows are copied straight into their tables").
 */
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { CopiedRows, StagedRows } from './staged-rows.js';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const SPECIAL = /[\\\n\r\t]/;

/** A value in COPY's text format, as node-postgres would send it as a parameter. */
export function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  // The rows hold text, numbers and 0/1 (values.ts); an object would be JSON, as node-postgres sends it.
  const s =
    typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : JSON.stringify(v);
  return SPECIAL.test(s) ? s.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c]!) : s;
}

const q = (name: string) => `"${name}"`;

type Query = (this: pg.Client, ...args: unknown[]) => Promise<pg.QueryResult>;
// Always called with a client as `this` (.call / .apply below).
const plainQuery = Reflect.get(pg.Client.prototype, 'query') as Query;

/**
 * Fills the stage, then runs `text` (which empties it into the table), on this one connection:
 * the steps stay in the caller's transaction. Outside one, a failure after the COPY empties the
 * stage, so no row is left for the next statement; inside one, the rollback undoes the COPY.
 */
async function loadStaged(client: pg.Client, text: string, staged: StagedRows): Promise<pg.QueryResult> {
  const cols = staged.columns.map(q).join(',');
  await plainQuery.call(
    client,
    // Every column, so each column list of the table fits one stage; no constraint is copied: the
    // table's own apply when the rows move.
    `create temp table if not exists ${q(staged.stage)} as select * from ${q(staged.table)} with no data`,
  );
  await copyRows(client, `copy ${q(staged.stage)} (${cols}) from stdin`, staged.rows);
  try {
    return await plainQuery.call(client, text);
  } catch (err) {
    await plainQuery.call(client, `delete from ${q(staged.stage)}`).catch(() => undefined);
    throw err;
  }
}

/**
 * Streams `rows` into the table of `text` (a `copy ... from stdin`). A row the table refuses fails
 * the COPY like any statement (its SQLSTATE on the error), and the server reads no more of it.
 */
async function copyRows(client: pg.Client, text: string, rows: CopiedRows['rows']): Promise<pg.QueryResult> {
  const data = rows.map((r) => r.map(copyField).join('\t')).join('\n') + '\n';
  const stream = client.query(copyFrom(text));
  // One chunk, so no pipeline: its end-of-stream watchers on both sides cost more than the write
  // (bench/README.md, "Thirteenth pass"). 'finish' comes once the server has taken the rows.
  await new Promise<void>((resolve, reject) => {
    stream.once('error', reject);
    stream.once('finish', resolve);
    stream.end(data);
  });
  return { command: 'COPY', rowCount: stream.rowCount, rows: [], oid: 0, fields: [] };
}

/**
 * The pool's client: a statement whose one parameter is StagedRows loads them (loadStaged); one
 * whose one parameter is CopiedRows copies them (copyRows).
 */
export class StagingClient extends pg.Client {}
(StagingClient.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args: unknown[]) {
  const [text, values] = args;
  if (typeof text === 'string' && Array.isArray(values) && values.length === 1) {
    if (values[0] instanceof StagedRows) return loadStaged(this, text, values[0]);
    if (values[0] instanceof CopiedRows) return copyRows(this, text, values[0].rows);
  }
  return plainQuery.apply(this, args);
};
