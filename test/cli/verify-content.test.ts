import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, type Dialect } from '../helpers/dialects.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

interface Report {
  drift: Array<{ entityType: string; entityId: string; kind: string; field?: string }>;
}

/** A person's SQL client on the mirror, foreign keys off (the sqlite3 shell's default; PostgreSQL's replica role). */
async function byHand(dialect: Dialect, database: string, statement: string, params: unknown[] = []): Promise<unknown[]> {
  if (dialect.name === 'sqlite') {
    const db = new Database(database);
    try {
      db.pragma('foreign_keys = OFF');
      const st = db.prepare(statement.replace(/\$\d+/g, '?'));
      return st.reader ? st.all(...params) : (st.run(...params), []);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    return (await client.query(statement, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Issue 26: after any one row of any table that mirrors upstream content is deleted or altered by
 * hand, `verify` reports the drift (exit 5) and `verify --repair` exits 0 and leaves `verify`
 * clean, through the real CLI, on both dialects. One mirror lives through every case in turn.
 */
for (const dialect of dialects) {
  describe(`verify compares content (${dialect.name})`, () => {
    const sim = useSimulator({ seed: 26, tickets: 8, deals: 6 });
    let env: Record<string, string>;
    let database: string;
    let done: () => Promise<void>;

    beforeAll(async () => {
      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      database = target.database;
      done = async () => {
        await target.drop();
        cleanup();
      };
      env = cliConfig(dir, { url: sim.url, database });
      for (const args of [['backfill'], ['sync']]) {
        const r = await runCli(args, env);
        expect(r.code, r.stderr).toBe(0);
      }
    }, 60_000);
    afterAll(async () => done?.());

    const one = async (sql: string) => ((await byHand(dialect, database, sql)) as Array<Record<string, string>>)[0]!;

    it('reports a hand edit of every mirrored table, and --repair mends each one', async () => {
      const clean = await runCli(['verify'], env);
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);

      const tag = await one('SELECT ticket_id, tag FROM ticket_tags ORDER BY ticket_id, tag LIMIT 1');
      const field = await one('SELECT ticket_id, key FROM ticket_fields ORDER BY ticket_id, key LIMIT 1');
      const message = await one('SELECT id, ticket_id FROM ticket_messages ORDER BY id LIMIT 1');
      const ticket = await one('SELECT id FROM tickets ORDER BY id LIMIT 1');
      const deal = await one('SELECT id FROM deals ORDER BY id LIMIT 1');
      const contact = await one('SELECT deal_id, contact_id FROM deal_contacts ORDER BY deal_id, contact_id LIMIT 1');
      const dealField = await one('SELECT deal_id, key FROM deal_fields ORDER BY deal_id, key LIMIT 1');
      const pipeline = await one('SELECT id FROM pipelines ORDER BY id LIMIT 1');
      const stage = await one('SELECT id FROM stages ORDER BY id LIMIT 1');
      const T = dialect.name === 'sqlite' ? '1' : 'true';
      // [table, what is done, the statement, the record the drift must name]
      const cases: [string, string, string, [string, string]][] = [
        ['tickets', 'deleted', `DELETE FROM tickets WHERE id = '${ticket.id}'`, ['ticket', ticket.id!]],
        [
          'tickets',
          'altered',
          `UPDATE tickets SET subject = 'by hand', priority = 'none' WHERE id = '${ticket.id}'`,
          ['ticket', ticket.id!],
        ],
        ['ticket_messages', 'deleted', `DELETE FROM ticket_messages WHERE id = '${message.id}'`, ['ticket', message.ticket_id!]],
        [
          'ticket_messages',
          'altered',
          `UPDATE ticket_messages SET body = 'by hand' WHERE id = '${message.id}'`,
          ['ticket', message.ticket_id!],
        ],
        [
          'ticket_tags',
          'deleted',
          `DELETE FROM ticket_tags WHERE ticket_id = '${tag.ticket_id}' AND tag = '${tag.tag}'`,
          ['ticket', tag.ticket_id!],
        ],
        [
          'ticket_tags',
          'altered',
          `UPDATE ticket_tags SET tag = 'by hand' WHERE ticket_id = '${tag.ticket_id}' AND tag = '${tag.tag}'`,
          ['ticket', tag.ticket_id!],
        ],
        [
          'ticket_fields',
          'deleted',
          `DELETE FROM ticket_fields WHERE ticket_id = '${field.ticket_id}' AND key = '${field.key}'`,
          ['ticket', field.ticket_id!],
        ],
        [
          'ticket_fields',
          'altered',
          `UPDATE ticket_fields SET value_text = 'by hand' WHERE ticket_id = '${field.ticket_id}' AND key = '${field.key}'`,
          ['ticket', field.ticket_id!],
        ],
        ['deals', 'deleted', `DELETE FROM deals WHERE id = '${deal.id}'`, ['deal', deal.id!]],
        ['deals', 'altered', `UPDATE deals SET name = 'by hand', amount_cents = 1 WHERE id = '${deal.id}'`, ['deal', deal.id!]],
        [
          'deal_contacts',
          'deleted',
          `DELETE FROM deal_contacts WHERE deal_id = '${contact.deal_id}' AND contact_id = '${contact.contact_id}'`,
          ['deal', contact.deal_id!],
        ],
        [
          'deal_contacts',
          'altered',
          `UPDATE deal_contacts SET position = 99, is_primary = ${T} WHERE deal_id = '${contact.deal_id}' AND contact_id = '${contact.contact_id}'`,
          ['deal', contact.deal_id!],
        ],
        [
          'deal_fields',
          'deleted',
          `DELETE FROM deal_fields WHERE deal_id = '${dealField.deal_id}' AND key = '${dealField.key}'`,
          ['deal', dealField.deal_id!],
        ],
        [
          'deal_fields',
          'altered',
          `UPDATE deal_fields SET value_json = '"by hand"' WHERE deal_id = '${dealField.deal_id}' AND key = '${dealField.key}'`,
          ['deal', dealField.deal_id!],
        ],
        ['pipelines', 'deleted', `DELETE FROM pipelines WHERE id = '${pipeline.id}'`, ['pipeline', pipeline.id!]],
        ['pipelines', 'altered', `UPDATE pipelines SET name = 'by hand' WHERE id = '${pipeline.id}'`, ['pipeline', pipeline.id!]],
        ['stages', 'deleted', `DELETE FROM stages WHERE id = '${stage.id}'`, ['stage', stage.id!]],
        ['stages', 'altered', `UPDATE stages SET position = 42 WHERE id = '${stage.id}'`, ['stage', stage.id!]],
      ];
      const tables = new Set(cases.map((c) => c[0]));
      expect(tables).toEqual(
        new Set([
          'tickets',
          'ticket_messages',
          'ticket_tags',
          'ticket_fields',
          'deals',
          'deal_contacts',
          'deal_fields',
          'pipelines',
          'stages',
        ]),
      );
      const outcomes: string[] = [];
      for (const [table, how, statement, [type, id]] of cases) {
        await byHand(dialect, database, statement);
        const found = await runCli(['verify', '--json'], env);
        const report = JSON.parse(found.stdout) as Report;
        const named = report.drift.filter((d) => d.entityType === type && d.entityId === id);
        const repaired = await runCli(['verify', '--repair'], env);
        const after = await runCli(['verify'], env);
        outcomes.push(
          `${table} ${how}: verify ${found.code} (${named.map((d) => d.field ?? d.kind).join(', ') || 'nothing named'}), repair ${repaired.code}, then verify ${after.code}${after.code === 0 ? '' : `\n${after.stdout}`}${repaired.code === 0 ? '' : `\n${repaired.stderr}`}`,
        );
        expect(found.code, outcomes.join('\n')).toBe(5);
        expect(named.length, outcomes.join('\n')).toBeGreaterThan(0);
        expect(repaired.code, outcomes.join('\n')).toBe(0);
        expect(after.code, outcomes.join('\n')).toBe(0);
      }
      console.log(`verify on ${dialect.name}:\n${outcomes.join('\n')}`);
    }, 900_000);
  });
}
