import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { refreshRptTables, RPT_TABLE_NAMES } from '../src/report/index.js';
import { openStore, type Store } from '../src/store/index.js';
import { databaseOf } from '../src/store/internal.js';

/**
 * Reporting benchmark (issue 4): a mirror of 50,000 tickets, 250,000 messages and 10,000 deals
 * with history, written straight into the tables with prepared statements; then a full refresh,
 * `SELECT *` and a typical filtered query per rpt_ table, and an incremental refresh after 100
 * tickets and 20 deals change.
 */

const SIZE = { tickets: 50_000, messagesPerTicket: 5, deals: 10_000, agents: 40, contacts: 20_000 };
const START = Date.parse('2023-06-01T00:00:00.000Z');
const SPAN = 365 * 86_400_000;
export const NOW = new Date(START + SPAN + 86_400_000);
const H = 3_600_000;

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The insert statements fillTickets uses, prepared once. */
function ticketStatements(db: Database.Database) {
  const ticket = db.prepare(`INSERT INTO tickets (id, number, key, subject, status, priority, contact_id, assignee_id, team_id, team_name,
    tags_json, fields_json, cc_json, message_count, first_reply_due_at, resolve_due_at, first_reply_breached_at, resolve_breached_at,
    first_agent_reply_at, resolved_at, status_changed_at, created_at, updated_at, synced_at, raw_json)
    VALUES (?, ?, ?, 'subject', ?, 'normal', ?, ?, 'team1', 'Tier 1', '[]', '{}', '[]', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}')`);
  const msg =
    db.prepare(`INSERT INTO ticket_messages (id, ticket_id, body, author_type, author_id, is_internal, attachments_json, created_at)
    VALUES (?, ?, 'x', ?, ?, ?, '[]', ?)`);
  const hist = db.prepare(`INSERT INTO ticket_history (ticket_id, field, from_value, to_value, changed_at, source, event_id)
    VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const tag = db.prepare('INSERT INTO ticket_tags (ticket_id, tag) VALUES (?, ?)');
  const event = db.prepare(
    `INSERT INTO events (id, type, entity_type, entity_id, payload_json, occurred_at, received_at) VALUES (?, ?, ?, ?, '{}', ?, ?)`,
  );
  return { ticket, msg, hist, tag, event };
}

/** Tickets follow the simulator's lifecycle: customer writes, agent replies (pending), customer answers (open), solved, closed. */
function fillTickets(db: Database.Database, rand: () => number): void {
  const { ticket, msg, hist, tag, event } = ticketStatements(db);
  let m = 0;
  let e = 0;
  for (let i = 0; i < SIZE.tickets; i++) {
    const id = `t${i}`;
    const created = START + Math.floor(rand() * SPAN);
    const agent = `a${Math.floor(rand() * SIZE.agents)}`;
    const complete = rand() < 0.8;
    if (complete) event.run(`e${e++}`, 'ticket.created', 'ticket', id, iso(created), iso(created));
    let status = 'open';
    let t = created;
    let firstReply: number | null = null;
    let resolvedAt: number | null = null;
    let assigned = false;
    const move = (to: string, at: number) => {
      if (complete || at > START + SPAN * 0.8) hist.run(id, 'status', status, to, iso(at), 'event', `h${e++}`);
      status = to;
    };
    msg.run(`m${m++}`, id, 'customer', `c${i % SIZE.contacts}`, 0, iso(t));
    for (let k = 1; k < SIZE.messagesPerTicket; k++) {
      t += Math.floor(rand() * 20 * H);
      const kind = k % 2 === 1 ? (rand() < 0.85 ? 'reply' : 'note') : 'customer';
      if (kind === 'customer') {
        msg.run(`m${m++}`, id, 'customer', `c${i % SIZE.contacts}`, 0, iso(t));
        if (status === 'pending') move('open', t);
      } else {
        msg.run(`m${m++}`, id, 'agent', agent, kind === 'note' ? 1 : 0, iso(t));
        if (kind === 'reply') {
          firstReply ??= t;
          if (!assigned) {
            hist.run(id, 'assignee_id', null, agent, iso(t), 'observed', null);
            assigned = true;
          }
          if (status !== 'pending') move('pending', t);
        }
      }
    }
    const r = rand();
    if (r < 0.7) {
      t += Math.floor(rand() * 48 * H);
      move('solved', t);
      resolvedAt = t;
      if (rand() < 0.1) {
        move('open', t + 2 * H);
        move('solved', t + 5 * H);
        resolvedAt = t + 5 * H;
        t += 5 * H;
      }
      if (t + 96 * H < NOW.getTime() && rand() < 0.8) move('closed', (t += 96 * H));
    }
    const frDue = created + 8 * H;
    const resDue = created + 72 * H;
    ticket.run(
      id,
      i + 1,
      `#${i + 1}`,
      status,
      `c${i % SIZE.contacts}`,
      assigned ? agent : null,
      SIZE.messagesPerTicket,
      iso(frDue),
      iso(resDue),
      (firstReply ?? t) > frDue ? iso(frDue) : null,
      (resolvedAt ?? t) > resDue ? iso(resDue) : null,
      firstReply === null ? null : iso(firstReply),
      resolvedAt === null ? null : iso(resolvedAt),
      iso(t),
      iso(created),
      iso(t),
      iso(t),
    );
    if (rand() < 0.5) tag.run(id, rand() < 0.5 ? 'billing' : 'bug');
  }
}

function fillDeals(db: Database.Database, rand: () => number): void {
  db.prepare("INSERT INTO pipelines (id, name, deal_count, position) VALUES ('p1', 'New business', 0, 0), ('p2', 'Renewals', 0, 1)").run();
  const stage = db.prepare('INSERT INTO stages (id, pipeline_id, name, position, is_won, is_lost) VALUES (?, ?, ?, ?, ?, ?)');
  for (const p of ['p1', 'p2']) {
    for (let s = 0; s < 6; s++) stage.run(`${p}s${s}`, p, `Stage ${s}`, s, s === 4 ? 1 : 0, s === 5 ? 1 : 0);
  }
  const deal = db.prepare(`INSERT INTO deals (id, name, amount, amount_cents, currency, close_date, status, pipeline_id, stage_id, owner_id,
    company_id, fields_json, created_at, updated_at, synced_at) VALUES (?, 'deal', ?, ?, ?, NULL, ?, ?, ?, ?, NULL, '{}', ?, ?, ?)`);
  const hist = db.prepare(
    `INSERT INTO deal_history (deal_id, field, from_value, to_value, changed_at, source) VALUES (?, 'stage_id', ?, ?, ?, 'observed')`,
  );
  const contact = db.prepare('INSERT INTO deal_contacts (deal_id, contact_id, is_primary, position) VALUES (?, ?, 1, 0)');
  const event = db.prepare(
    `INSERT INTO events (id, type, entity_type, entity_id, payload_json, occurred_at, received_at) VALUES (?, 'deal.created', 'deal', ?, '{}', ?, ?)`,
  );
  for (let i = 0; i < SIZE.deals; i++) {
    const id = `d${i}`;
    const p = rand() < 0.7 ? 'p1' : 'p2';
    const created = START + Math.floor(rand() * SPAN);
    if (rand() < 0.8) event.run(`de${i}`, id, iso(created), iso(created));
    let s = 0;
    let t = created;
    while (s < 4 && rand() < 0.6) {
      const next = rand() < 0.15 && s > 0 ? s - 1 : rand() < 0.2 ? 5 : s + 1;
      t += Math.floor(rand() * 10 * 86_400_000);
      hist.run(id, `${p}s${s}`, `${p}s${next}`, iso(t));
      s = next;
      if (s === 5) break;
    }
    const cents = Math.floor(rand() * 5_000_000);
    deal.run(
      id,
      `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`,
      cents,
      ['EUR', 'USD', 'GBP'][i % 3],
      s === 4 ? 'won' : s === 5 ? 'lost' : 'open',
      p,
      `${p}s${s}`,
      `a${i % SIZE.agents}`,
      iso(created),
      iso(t),
      iso(t),
    );
    contact.run(id, `c${i % SIZE.contacts}`);
  }
}

function fillPeople(db: Database.Database): void {
  const user = db.prepare('INSERT INTO users (id, name, email) VALUES (?, ?, ?)');
  for (let a = 0; a < SIZE.agents; a++) user.run(`a${a}`, `Agent ${a}`, `a${a}@example.com`);
  const contact = db.prepare('INSERT INTO contacts (id, first_name, last_name, email) VALUES (?, ?, ?, ?)');
  for (let c = 0; c < SIZE.contacts; c++) contact.run(`c${c}`, 'First', `Last${c}`, `c${c}@example.com`);
}

/** Timings of reading one rpt_ table whole and filtered (see the callers for what each step pays). */
export interface TableTimings {
  rows: number;
  stepMs: number;
  objectsMs: number;
  filteredMs: number;
}

/** What the reporting bench measures; the PostgreSQL one adds its copy and ANALYZE times. */
export interface ReportingFigures {
  mirror: Record<string, number>;
  buildMs: number;
  fullRefreshMs: number;
  fullRefreshSteps: Record<string, number>;
  incrementalRefreshMs: number;
  incrementalSteps: Record<string, number>;
  healthOnlyRefreshMs: number;
  aggregatesMatchFull: boolean;
  views: Record<string, TableTimings>;
}

export const FILTERED: Record<string, string> = {
  rpt_tickets: "SELECT * FROM rpt_tickets WHERE created_at >= '2024-05-01' AND status = 'open'",
  rpt_ticket_status_intervals:
    "SELECT status, sum(minutes) FROM rpt_ticket_status_intervals WHERE valid_from >= '2024-04-01' GROUP BY status",
  rpt_support_daily: "SELECT * FROM rpt_support_daily WHERE day >= '2024-04-01'",
  rpt_agent_daily: "SELECT agent_id, sum(public_replies) FROM rpt_agent_daily WHERE day >= '2024-04-01' GROUP BY agent_id",
  rpt_deals: "SELECT * FROM rpt_deals WHERE status = 'open' AND pipeline_id = 'p1'",
  rpt_deal_stage_intervals:
    "SELECT stage_id, count(*), sum(minutes) FROM rpt_deal_stage_intervals WHERE stage_id = 'p1s2' GROUP BY stage_id",
  rpt_pipeline_stages: "SELECT * FROM rpt_pipeline_stages WHERE currency = 'EUR'",
  rpt_sales_monthly: "SELECT * FROM rpt_sales_monthly WHERE month >= '2024-01-01' AND currency = 'USD'",
  rpt_sync_health: 'SELECT lag_seconds FROM rpt_sync_health',
  rpt_ticket_custom_fields: 'SELECT count(*) FROM rpt_ticket_custom_fields',
  rpt_deal_custom_fields: 'SELECT count(*) FROM rpt_deal_custom_fields',
  rpt_ticket_versions: "SELECT * FROM rpt_ticket_versions WHERE valid_to IS NULL AND status = 'open'",
  rpt_deal_versions: "SELECT * FROM rpt_deal_versions WHERE valid_to IS NULL AND status = 'open'",
  rpt_ticket_daily: "SELECT status, count(*) FROM rpt_ticket_daily WHERE day = '2024-05-15' GROUP BY status",
  rpt_deal_daily: "SELECT stage_id, count(*), sum(amount) FROM rpt_deal_daily WHERE day = '2024-05-15' GROUP BY stage_id",
};

/** Builds the benchmark mirror in a new SQLite file (migrated, filled, analysed). Also used by reporting-pg.ts. */
export async function buildMirror(database: string): Promise<{ counts: Record<string, number>; buildMs: number }> {
  const setup = await openStore({ database });
  await setup.migrate();
  await setup.close();
  const raw = new Database(database);
  raw.pragma('journal_mode = WAL');
  // Rows are written child-first (a ticket's final state is known only after its messages).
  raw.pragma('foreign_keys = OFF');
  const rand = rng(42);
  const t0 = performance.now();
  raw.transaction(() => {
    fillPeople(raw);
    fillTickets(raw, rand);
    fillDeals(raw, rand);
  })();
  raw.exec('ANALYZE');
  const counts = Object.fromEntries(
    ['tickets', 'ticket_messages', 'ticket_history', 'deals', 'deal_history', 'events'].map((t) => [
      t,
      (raw.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n,
    ]),
  );
  raw.close();
  const buildMs = performance.now() - t0;
  return { counts, buildMs };
}

/** The ids the incremental step changes: 100 tickets and 20 deals spread over the mirror. */
export function changedIds(): { tickets: Set<string>; deals: Set<string> } {
  return {
    tickets: new Set(Array.from({ length: 100 }, (_, i) => `t${i * 499}`)),
    deals: new Set(Array.from({ length: 20 }, (_, i) => `d${i * 499}`)),
  };
}

/** Rebuilds the rpt_ tables in full and tells whether the daily aggregates come out as they were. */
export async function incrementalEqualsFull(store: Store): Promise<boolean> {
  const aggregates = async () => {
    const out: string[] = [];
    for (const t of ['rpt_support_daily', 'rpt_agent_daily']) {
      const r = await sql.raw<Record<string, unknown>>(`SELECT * FROM ${t} ORDER BY 1, 2, 3, 4`).execute(databaseOf(store));
      out.push(JSON.stringify(r.rows));
    }
    return out.join('\n');
  };
  const afterIncremental = await aggregates();
  await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: NOW });
  return afterIncremental === (await aggregates());
}

export async function benchReporting(): Promise<ReportingFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-report-'));
  const database = join(dir, 'mirror.sqlite');
  try {
    const { counts, buildMs } = await buildMirror(database);
    const store = await openStore({ database });
    const full = await refreshRptTables(store, { tickets: 'all', deals: 'all' }, { now: NOW });
    // As the sync does after a full rebuild (src/sync/reporting.ts): PostgreSQL vacuums and analyzes.
    await store.afterBulkLoad(RPT_TABLE_NAMES);
    const { tickets: changedTickets, deals: changedDeals } = changedIds();
    await databaseOf(store)
      .updateTable('tickets')
      .set({ status: 'open', updated_at: NOW.toISOString() })
      .where('id', 'in', [...changedTickets])
      .execute();
    await databaseOf(store)
      .updateTable('deals')
      .set({ amount_cents: 12345, amount: '123.45' })
      .where('id', 'in', [...changedDeals])
      .execute();
    const incremental = await refreshRptTables(store, { tickets: changedTickets, deals: changedDeals }, { now: NOW });
    const healthOnly = await refreshRptTables(store, { tickets: new Set(), deals: new Set() }, { now: NOW });

    // Timed on a separate read-only connection, as a BI tool reads: `stepMs` steps every row and
    // reads every column in SQLite (what sqlite3 or a JDBC driver pays); `objectsMs` also builds a
    // JS object per row through Kysely (a Node client's cost, dominated by object creation).
    const reader = new Database(database, { readonly: true });
    const step = (query: string) => {
      const t = performance.now();
      let n = 0;
      for (const _row of reader.prepare(query).raw().iterate()) n++;
      return { ms: Math.round((performance.now() - t) * 10) / 10, rows: n };
    };
    const objects = async (query: string) => {
      const t = performance.now();
      await sql.raw(query).execute(databaseOf(store));
      return Math.round((performance.now() - t) * 10) / 10;
    };
    const views: Record<string, TableTimings> = {};
    for (const table of RPT_TABLE_NAMES) {
      const all = step(`SELECT * FROM ${table}`);
      views[table] = {
        rows: all.rows,
        stepMs: all.ms,
        objectsMs: await objects(`SELECT * FROM ${table}`),
        filteredMs: step(FILTERED[table] as string).ms,
      };
    }
    reader.close();
    // The incremental aggregates must equal a full rebuild's at this size too, value for value.
    const aggregatesMatchFull = await incrementalEqualsFull(store);
    await store.close();
    return {
      mirror: counts,
      buildMs: Math.round(buildMs),
      fullRefreshMs: full.durationMs,
      fullRefreshSteps: full.steps,
      incrementalRefreshMs: incremental.durationMs,
      incrementalSteps: incremental.steps,
      healthOnlyRefreshMs: healthOnly.durationMs,
      aggregatesMatchFull,
      views,
    };
  } finally {
    // WSMIRROR_BENCH_KEEP=1 keeps the mirror for profiling single statements.
    if (process.env.WSMIRROR_BENCH_KEEP) console.error(`kept ${database}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

export function printBenchReporting(result: ReportingFigures): void {
  console.log('mirror', JSON.stringify(result.mirror));
  console.log(`build ${result.buildMs} ms; full refresh ${result.fullRefreshMs} ms ${JSON.stringify(result.fullRefreshSteps)}`);
  printRefreshAndViews(result, 'table');
}

/** The lines both dialects' reports share: incremental refresh figures and the per-table timings. */
export function printRefreshAndViews(result: ReportingFigures, tableLabel: string): void {
  console.log(`incremental refresh (100 tickets, 20 deals) ${result.incrementalRefreshMs} ms ${JSON.stringify(result.incrementalSteps)}`);
  console.log(`sync-health-only refresh ${result.healthOnlyRefreshMs} ms`);
  console.log(`incremental daily aggregates equal a full rebuild's: ${result.aggregatesMatchFull}`);
  const cols = ['rows', 'select * (step) ms', 'select * (JS objects) ms', 'filtered ms'];
  console.log(`${tableLabel.padEnd(30)}${cols.map((c) => c.padStart(26)).join('')}`);
  for (const [t, v] of Object.entries(result.views)) {
    console.log(`${t.padEnd(30)}${[v.rows, v.stepMs, v.objectsMs, v.filteredMs].map((x) => String(x).padStart(26)).join('')}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchReporting().then(printBenchReporting, (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
