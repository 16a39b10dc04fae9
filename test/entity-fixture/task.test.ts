import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { entityOf, isRecordType, RECORD_ENTITIES, registeredName } from '../../src/entities/index.js';
import { registerRecordType } from '../../src/store/record-stores.js';
import { databaseOf } from '../../src/store/internal.js';
import { emptyStats, runVerify, type VerifyResult } from '../../src/sync/index.js';
import { SIMULATOR_DIALECTS } from '../../src/simulator/index.js';
import { dialects } from '../helpers/dialects.js';
import { upstreamDialects } from '../helpers/upstream.js';
import { createDeclaredTables } from '../helpers/ddl.js';
import { callApi, harness, type Harness } from '../sync/harness.js';
import { registerTaskFixture, task as fixture, TASK_TABLES, type Task } from './task.js';

// Registered before any simulator or store opens: the registry is read when the engine needs it.
registerTaskFixture();

interface TaskRow {
  id: string;
  title: string | null;
  status: string | null;
  due_on: string | null;
  updated_at: string | null;
  deleted_at: string | null;
}

/**
 * A record type the engine has never heard of (test/entity-fixture/task.ts), registered for this
 * run: backfilled, synced through the change log (create, update, delete), verified and repaired
 * like a ticket or a deal, on each database. Its table comes from its declaration, not a migration.
 */
for (const upstream of upstreamDialects())
  for (const dialect of dialects)
    describe(`a fixture entity declared only under test/, on ${dialect.name} (upstream ${upstream})`, () => {
      let h: Harness | null = null;
      afterEach(async () => {
        await h?.close();
        h = null;
      });

      const db = () => databaseOf(h!.store);
      const api = (method: string, path: string, body?: unknown) => callApi(h!.sim, method, path, body);
      /** The upstream's list, the oracle: every served task as the list shows it. */
      const listed = async (): Promise<Task[]> => ((await api('GET', '/tasks?limit=100')) as { tasks: Task[] }).tasks;
      const rows = async (): Promise<TaskRow[]> =>
        (await sql<TaskRow>`select id, title, status, due_on, updated_at, deleted_at from tasks order by id`.execute(db())).rows;
      const live = async () => (await rows()).filter((r) => r.deleted_at === null);
      /** The mirror's live tasks against the list: same ids, titles, statuses, due dates and versions. */
      async function expectMirrored(): Promise<void> {
        const want = (await listed()).map((t) => ({
          id: t.id,
          title: t.title,
          status: t.status,
          due_on: t.dueOn,
          at: Date.parse(t.updatedAt),
        }));
        const got = (await live()).map((r) => ({
          id: r.id,
          title: r.title,
          status: r.status,
          due_on: r.due_on === null ? null : String(r.due_on).slice(0, 10),
          at: Date.parse(`${String(r.updated_at).replace(' ', 'T')}Z`),
        }));
        expect(got).toEqual(want.sort((a, b) => a.id.localeCompare(b.id)));
      }
      const verify = (repair: boolean): Promise<VerifyResult> => runVerify(h!.ctx, emptyStats(), { repair, settleMs: 0 });

      it('is backfilled, synced from the change log, verified and repaired like a built-in type', async () => {
        expectTaskRegisteredLast();
        h = await harness({ dialect, pageSize: 2, sim: { seed: 47, tickets: 4, deals: 3, dialect: SIMULATOR_DIALECTS[upstream] } });
        await createDeclaredTables(db() as never, dialect.name, TASK_TABLES);
        const a = (await api('POST', '/tasks', { title: 'write the fixture', dueOn: '2024-06-01' })).task as Task;
        const b = (await api('POST', '/tasks', { title: 'register it' })).task as Task;
        const c = (await api('POST', '/tasks', { title: 'mirror it' })).task as Task;

        // Backfill: its list is a phase of its own, counted like the others.
        await h.backfill();
        await expectMirrored();
        expect((await live()).map((r) => r.id).sort()).toEqual([a.id, b.id, c.id].sort());
        const counts = await h.store.counts();
        expect([counts.tasks, counts.task_history]).toEqual([3, 0]);
        expect(await h.diff()).toEqual([]);

        // Sync through the change log: a create, an update of the tracked status (and the title), a delete.
        h.sim.control.advanceClock(60_000);
        const d = (await api('POST', '/tasks', { title: 'sync it' })).task as Task;
        await api('PATCH', `/tasks/${a.id}`, { status: 'done', title: 'wrote the fixture' });
        await api('DELETE', `/tasks/${b.id}`);
        h.sim.control.clearRequests();
        const stats = await h.sync();
        expect(h.sim.control.requests().some((r) => r.path === '/api/v1/events')).toBe(true);
        expect([...(stats.changed[fixture.plural] ?? [])].sort()).toEqual([a.id, b.id, d.id].sort());
        await expectMirrored();
        expect((await rows()).find((r) => r.id === b.id)?.deleted_at).not.toBeNull();
        const history = await sql<{ task_id: string; field: string; from_value: string; to_value: string; source: string }>`
        select task_id, field, from_value, to_value, source from task_history`.execute(db());
        // Told by its event where the log spells the change; observed from the two reads where it is opaque.
        const source = upstream.startsWith('opaque') ? 'observed' : 'event';
        expect(history.rows).toEqual([{ task_id: a.id, field: 'status', from_value: 'open', to_value: 'done', source }]);
        expect(await h.diff()).toEqual([]);

        // Verify: level, then a hand edit of one column is content drift, named by its column.
        const level = await verify(false);
        expect(level.checked.tasks).toBe(3);
        expect(level.drift).toEqual([]);
        await sql`update tasks set title = 'edited by hand' where id = ${c.id}`.execute(db());
        const drifted = await verify(false);
        expect(drifted.drift).toEqual([expect.objectContaining({ entityType: 'task', entityId: c.id, kind: 'content', field: 'title' })]);

        // Repair re-reads it through the task's own read; a verify after finds nothing.
        h.sim.control.clearRequests();
        const repaired = await verify(true);
        expect(repaired.repaired).toBe(1);
        expect(h.sim.control.requests().some((r) => r.path === `/api/v1/tasks/${c.id}`)).toBe(true);
        expect((await rows()).find((r) => r.id === c.id)?.title).toBe('mirror it');
        expect((await verify(false)).drift).toEqual([]);
        await expectMirrored();
        expect(entityOf(fixture.type).plural).toBe('tasks');
      });
    });

/** The registry holds the built-in types, then the fixture's, registered once (whatever the built-in ones are). */
function expectTaskRegisteredLast(): void {
  const types = RECORD_ENTITIES.map((e) => e.type);
  expect(types).toEqual(expect.arrayContaining(['ticket', 'deal']));
  expect(types.indexOf(registeredName('task'))).toBe(types.length - 1);
}

describe('registering a record type', () => {
  it('refuses a name, list or table already taken, and a store that writes another type', () => {
    expect(() => registerRecordType({ ...fixture, metricLabel: 'again' })).toThrow(/already taken by task/);
    const chore = {
      ...fixture,
      type: registeredName('chore'),
      plural: registeredName('chores'),
      table: registeredName('chores'),
      historyTable: registeredName('chore_history'),
    };
    expect(() => registerRecordType(chore)).toThrow(/the store of chore writes task/);
    expect(isRecordType('chore')).toBe(false);
    expect(() => entityOf(chore.type)).toThrow(/no entity is registered for chore/);
    expectTaskRegisteredLast();
  });
});
