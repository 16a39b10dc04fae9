/**
 * Issue 31, records: a record's own timestamps are bounded like events, and text that is not
 * valid Unicode is stored with U+FFFD (docs/sync.md, "Hostile upstream"; docs/schema.md). Through
 * the real CLI and the hostile proxy, on every dialect; each case ends with later ordinary
 * changes arriving and the mirror equal to the truth.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { useHostileMirror, type HostileMirror } from './mirror.js';
import { databaseOf } from '../../src/store/internal.js';

type Row = Record<string, unknown>;

const ticketRow = (m: HostileMirror, id: string): Promise<Row | undefined> =>
  m.read((s) => databaseOf(s).selectFrom('tickets').selectAll().where('id', '=', id).executeTakeFirst());

/** A ticket upstream that can still take a public reply (closed ones refuse it). */
function openTicket(m: HostileMirror, skip: readonly string[]): string {
  const t = (m.sim.control.truth().tickets as Array<{ id: string; status: string }>).find(
    (x) => x.status !== 'closed' && !skip.includes(x.id),
  );
  return t!.id;
}

/** Every row of every table, read by Python's sqlite3 (which refuses text that is not UTF-8). */
function pythonReadsEveryRow(file: string): { status: number | null; out: string } {
  const script = [
    'import sqlite3, sys',
    'db = sqlite3.connect(sys.argv[1])',
    'tables = [r[0] for r in db.execute("select name from sqlite_master where type = \'table\'")]',
    'n = 0',
    'for t in tables:',
    '    n += len(db.execute(f\'select * from "{t}"\').fetchall())',
    'print(n)',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script, file], { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

for (const dialect of dialects) {
  describe(`hostile record values (${dialect.name})`, () => {
    const m = useHostileMirror(dialect, 32);

    it('a ticket served once with updatedAt 2100 is not frozen: a new subject and a reply (ticket.replied) still arrive', async () => {
      const x = openTicket(m, []);
      m.hostile.faults.patchRecords = { [x]: { updatedAt: '2100-01-01T00:00:00.000Z' } };
      await m.edit('tickets', x);
      const r1 = await m.run();
      expect(r1.code, r1.stderr).toBe(0);
      // Stored as served: the value is the upstream's, it only decides nothing.
      expect((await ticketRow(m, x))?.updated_at).toBe('2100-01-01 00:00:00.000');

      m.clearFaults();
      const subject = await m.edit('tickets', x);
      const r2 = await m.run();
      expect(r2.code, r2.stderr).toBe(0);
      expect((await ticketRow(m, x))?.subject).toBe(subject);

      // Served with 2100 once more, then a reply: the new message arrives.
      m.hostile.faults.patchRecords = { [x]: { updatedAt: '2100-01-01T00:00:00.000Z' } };
      await m.edit('tickets', x);
      expect((await m.run()).code).toBe(0);
      m.clearFaults();
      const body = await m.reply(x);
      const r3 = await m.run();
      expect(r3.code, r3.stderr).toBe(0);
      const bodies = await m.read(async (s) =>
        (await databaseOf(s).selectFrom('ticket_messages').select('body').where('ticket_id', '=', x).execute()).map((b) => b.body),
      );
      expect(bodies).toContain(body);
      expect(await m.diff()).toEqual([]);
    }, 60_000);

    it('lone surrogates in a subject, tags, a custom-field key and value and a message body are stored as U+FFFD, readable everywhere', async () => {
      const [x, y] = m.ticketIds();
      m.hostile.faults.rewrite = {
        record(kind, rec) {
          if (kind !== 'ticket' || rec.id !== x) return;
          rec.subject = 'sub\ud800ject';
          rec.tags = ['t\udc00ag', 'plain'];
          rec.fields = { ...(rec.fields as object), 'k\ud800ey': 'v\udbffal', nested: { 'a\ud800': ['b\udc00'] } };
          const messages = rec.messages as Row[] | undefined;
          if (messages?.[0]) messages[0].body = 'bo\ud800dy';
        },
      };
      await m.edit('tickets', x!);
      const r1 = await m.run();
      expect(r1.code, r1.stderr).toBe(0);
      expect(await m.dirty()).toEqual([]);
      const row = (await ticketRow(m, x!))!;
      expect(row.subject).toBe('sub\uFFFDject');
      const raw = JSON.parse(String(row.raw_json)) as Row;
      expect(raw.subject).toBe('sub\uFFFDject');
      expect(JSON.stringify(raw)).not.toMatch(/\\ud[89a-f]/i);
      const fields = await m.read((s) => databaseOf(s).selectFrom('ticket_fields').selectAll().where('ticket_id', '=', x!).execute());
      expect(fields.find((f) => f.key === 'k\uFFFDey')?.value_text).toBe('v\uFFFDal');
      expect(JSON.parse(String(fields.find((f) => f.key === 'nested')?.value_json))).toEqual({ 'a\uFFFD': ['b\uFFFD'] });
      const tags = await m.read(async (s) =>
        (await databaseOf(s).selectFrom('ticket_tags').select('tag').where('ticket_id', '=', x!).execute()).map((t) => t.tag).sort(),
      );
      expect(tags).toEqual(['plain', 't\uFFFDag']);
      const bodies = await m.read(async (s) =>
        (await databaseOf(s).selectFrom('ticket_messages').select('body').where('ticket_id', '=', x!).execute()).map((b) => b.body),
      );
      expect(bodies).toContain('bo\uFFFDdy');
      if (dialect.name === 'sqlite') {
        const py = pythonReadsEveryRow(m.database);
        expect(py.status, py.out).toBe(0);
      }

      // Read again with the same values (the key row now exists): no UNIQUE failure, no stuck record.
      const subject = await m.edit('tickets', y!);
      await m.edit('tickets', x!);
      const r2 = await m.run();
      expect(r2.code, r2.stderr).toBe(0);
      expect(await m.dirty()).toEqual([]);
      expect((await ticketRow(m, y!))?.subject).toBe(subject);

      m.clearFaults();
      await m.edit('tickets', x!);
      expect((await m.run()).code).toBe(0);
      expect(await m.diff()).toEqual([]);
    }, 60_000);

    it('two custom-field keys that are one once cleaned quarantine the record with a reason; its previous copy stays and later changes arrive', async () => {
      const [, , x, y] = m.ticketIds();
      const before = (await ticketRow(m, x!))!;
      m.hostile.faults.extraFields = { id: x!, fields: { 'k\ud800': 1, 'k\udbff': 2 } };
      await m.edit('tickets', x!);
      const subject = await m.edit('tickets', y!);
      const r = await m.run();
      expect(r.code, r.stderr).toBe(0);
      expect((await m.quarantined('ticket')).find((q) => q.entity_id === x)?.reason).toMatch(
        /are one key .* once text that is not valid Unicode/,
      );
      expect((await ticketRow(m, x!))?.subject).toBe(before.subject);
      expect((await ticketRow(m, y!))?.subject).toBe(subject);
      expect(await m.dirty()).toEqual([]);

      m.clearFaults();
      const fixed = await m.edit('tickets', x!);
      expect((await m.run()).code).toBe(0);
      expect((await ticketRow(m, x!))?.subject).toBe(fixed);
      expect((await m.quarantined('ticket')).find((q) => q.entity_id === x)).toBeUndefined();
      expect(await m.diff()).toEqual([]);
    }, 60_000);
  });
}
