import { describe, expect, it } from 'vitest';
import { byHand } from '../helpers/by-hand.js';
import { dialects } from '../helpers/dialects.js';
import { runCli } from '../helpers/cli.js';
import { useBackfilledMirror, useSimulator } from './env.js';

interface Report {
  drift: Array<{ entityType: string; entityId: string; kind: string; field?: string }>;
}

/**
 * One hand edit: [table, what is done, the statement, the record the drift must name, what the
 * drift may say about it (`missing`, the column, or the child table: `d.field ?? d.kind`)].
 */
type Case = [string, 'deleted' | 'altered', string, [string, string], string[]];

/**
 * Issue 26: after any one row of any table that mirrors upstream content is deleted or altered by
 * hand, `verify` reports the drift (exit 5) and `verify --repair` exits 0 and leaves `verify`
 * clean, through the real CLI, on both dialects. One mirror lives through every case. The nine
 * deletions (then the nine alterations) are made together, each on a record no other case in the
 * round touches, so one spawned `verify --json` must name every record for its own edit: a table
 * verify stopped comparing leaves its record unnamed, whatever the other eight do.
 */
for (const dialect of dialects) {
  describe(`verify compares content (${dialect.name})`, () => {
    const sim = useSimulator({ seed: 26, tickets: 8, deals: 6 });
    const mirror = useBackfilledMirror(dialect, sim);

    const one = async (sql: string) => {
      const row = ((await byHand(dialect, mirror.database, sql)) as Array<Record<string, string>>)[0];
      expect(row, `no row for ${sql}`).toBeDefined();
      return row!;
    };
    const notIn = (ids: string[]) => `(${ids.map((id) => `'${id}'`).join(', ')})`;

    /** Makes a round's edits, then one `verify --json`, one `verify --repair`, one `verify`; returns what each said. */
    async function round(cases: Case[]): Promise<{ log: string; missed: string[]; codes: number[] }> {
      for (const [, , statement] of cases) await byHand(dialect, mirror.database, statement);
      const found = await runCli(['verify', '--json'], mirror.env);
      const report = JSON.parse(found.stdout) as Report;
      const lines: string[] = [];
      const missed: string[] = [];
      for (const [table, how, , [type, id], expected] of cases) {
        const named = report.drift.filter((d) => d.entityType === type && d.entityId === id).map((d) => d.field ?? d.kind);
        lines.push(`${table} ${how}: ${type} ${id} named for ${named.join(', ') || 'nothing'}`);
        if (!named.some((n) => expected.includes(n))) missed.push(`${table} ${how}`);
      }
      const repaired = await runCli(['verify', '--repair'], mirror.env);
      const after = await runCli(['verify'], mirror.env);
      lines.push(`verify ${found.code}, repair ${repaired.code}, then verify ${after.code}`);
      if (repaired.code !== 0) lines.push(repaired.stderr);
      if (after.code !== 0) lines.push(after.stdout);
      return { log: lines.join('\n'), missed, codes: [found.code ?? -1, repaired.code ?? -1, after.code ?? -1] };
    }

    it('reports a hand edit of every mirrored table, and --repair mends each one', async () => {
      const clean = await runCli(['verify'], mirror.env);
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);

      // Each case on its own record: four tickets, three deals, a pipeline and a stage of another one.
      const ticket = await one('SELECT id FROM tickets ORDER BY id LIMIT 1');
      const message = await one(
        `SELECT id, ticket_id FROM ticket_messages WHERE ticket_id NOT IN ${notIn([ticket.id!])} ORDER BY id LIMIT 1`,
      );
      const tag = await one(
        `SELECT ticket_id, tag FROM ticket_tags WHERE ticket_id NOT IN ${notIn([ticket.id!, message.ticket_id!])} ORDER BY ticket_id, tag LIMIT 1`,
      );
      const field = await one(
        `SELECT ticket_id, key FROM ticket_fields WHERE ticket_id NOT IN ${notIn([ticket.id!, message.ticket_id!, tag.ticket_id!])} ORDER BY ticket_id, key LIMIT 1`,
      );
      const deal = await one('SELECT id FROM deals ORDER BY id LIMIT 1');
      const contact = await one(
        `SELECT deal_id, contact_id FROM deal_contacts WHERE deal_id NOT IN ${notIn([deal.id!])} ORDER BY deal_id, contact_id LIMIT 1`,
      );
      const dealField = await one(
        `SELECT deal_id, key FROM deal_fields WHERE deal_id NOT IN ${notIn([deal.id!, contact.deal_id!])} ORDER BY deal_id, key LIMIT 1`,
      );
      const pipeline = await one('SELECT id FROM pipelines ORDER BY id LIMIT 1');
      const stage = await one(`SELECT id FROM stages WHERE pipeline_id NOT IN ${notIn([pipeline.id!])} ORDER BY id LIMIT 1`);
      const T = dialect.name === 'sqlite' ? '1' : 'true';
      const tagKey = `ticket_id = '${tag.ticket_id}' AND tag = '${tag.tag}'`;
      const fieldKey = `ticket_id = '${field.ticket_id}' AND key = '${field.key}'`;
      const contactKey = `deal_id = '${contact.deal_id}' AND contact_id = '${contact.contact_id}'`;
      const dealFieldKey = `deal_id = '${dealField.deal_id}' AND key = '${dealField.key}'`;
      const deleted: Case[] = [
        ['tickets', 'deleted', `DELETE FROM tickets WHERE id = '${ticket.id}'`, ['ticket', ticket.id!], ['missing']],
        [
          'ticket_messages',
          'deleted',
          `DELETE FROM ticket_messages WHERE id = '${message.id}'`,
          ['ticket', message.ticket_id!],
          ['ticket_messages'],
        ],
        ['ticket_tags', 'deleted', `DELETE FROM ticket_tags WHERE ${tagKey}`, ['ticket', tag.ticket_id!], ['ticket_tags']],
        ['ticket_fields', 'deleted', `DELETE FROM ticket_fields WHERE ${fieldKey}`, ['ticket', field.ticket_id!], ['ticket_fields']],
        ['deals', 'deleted', `DELETE FROM deals WHERE id = '${deal.id}'`, ['deal', deal.id!], ['missing']],
        ['deal_contacts', 'deleted', `DELETE FROM deal_contacts WHERE ${contactKey}`, ['deal', contact.deal_id!], ['deal_contacts']],
        ['deal_fields', 'deleted', `DELETE FROM deal_fields WHERE ${dealFieldKey}`, ['deal', dealField.deal_id!], ['deal_fields']],
        ['pipelines', 'deleted', `DELETE FROM pipelines WHERE id = '${pipeline.id}'`, ['pipeline', pipeline.id!], ['missing']],
        ['stages', 'deleted', `DELETE FROM stages WHERE id = '${stage.id}'`, ['stage', stage.id!], ['missing']],
      ];
      const altered: Case[] = [
        [
          'tickets',
          'altered',
          `UPDATE tickets SET subject = 'by hand', priority = 'none' WHERE id = '${ticket.id}'`,
          ['ticket', ticket.id!],
          ['subject', 'priority'],
        ],
        [
          'ticket_messages',
          'altered',
          `UPDATE ticket_messages SET body = 'by hand' WHERE id = '${message.id}'`,
          ['ticket', message.ticket_id!],
          ['ticket_messages'],
        ],
        ['ticket_tags', 'altered', `UPDATE ticket_tags SET tag = 'by hand' WHERE ${tagKey}`, ['ticket', tag.ticket_id!], ['ticket_tags']],
        [
          'ticket_fields',
          'altered',
          `UPDATE ticket_fields SET value_text = 'by hand' WHERE ${fieldKey}`,
          ['ticket', field.ticket_id!],
          ['ticket_fields'],
        ],
        [
          'deals',
          'altered',
          `UPDATE deals SET name = 'by hand', amount_cents = 1 WHERE id = '${deal.id}'`,
          ['deal', deal.id!],
          ['name', 'amount_cents'],
        ],
        [
          'deal_contacts',
          'altered',
          `UPDATE deal_contacts SET position = 99, is_primary = ${T} WHERE ${contactKey}`,
          ['deal', contact.deal_id!],
          ['deal_contacts'],
        ],
        [
          'deal_fields',
          'altered',
          `UPDATE deal_fields SET value_json = '"by hand"' WHERE ${dealFieldKey}`,
          ['deal', dealField.deal_id!],
          ['deal_fields'],
        ],
        ['pipelines', 'altered', `UPDATE pipelines SET name = 'by hand' WHERE id = '${pipeline.id}'`, ['pipeline', pipeline.id!], ['name']],
        ['stages', 'altered', `UPDATE stages SET position = 42 WHERE id = '${stage.id}'`, ['stage', stage.id!], ['position']],
      ];
      const tables = [
        'tickets',
        'ticket_messages',
        'ticket_tags',
        'ticket_fields',
        'deals',
        'deal_contacts',
        'deal_fields',
        'pipelines',
        'stages',
      ];
      const outcomes: string[] = [];
      for (const cases of [deleted, altered]) {
        expect(cases.map((c) => c[0])).toEqual(tables);
        // No two edits of a round on one record, so none can be credited with another's drift.
        expect(new Set(cases.map((c) => c[3].join(' '))).size).toBe(cases.length);
        const { log, missed, codes } = await round(cases);
        outcomes.push(log);
        expect(missed, outcomes.join('\n')).toEqual([]);
        expect(codes, outcomes.join('\n')).toEqual([5, 0, 0]);
      }
      console.log(`verify on ${dialect.name}:\n${outcomes.join('\n')}`);
    }, 900_000);
  });
}
