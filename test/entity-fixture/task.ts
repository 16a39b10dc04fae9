import { z } from 'zod';
import type { ListSource, RecordSource } from '../../src/api/types.js';
import { id } from '../../src/api/schemas.js';
import { registeredName } from '../../src/entities/index.js';
import { declaredRecordStore } from '../../src/store/declared-record.js';
import { registerRecordType, type RecordDeclaration } from '../../src/store/record-stores.js';
import { historyTable, recordStamps, type TableDecl } from '../../src/entities/table-decl.js';
import { rowMapping } from '../../src/store/tables.js';
import { dateOnly, json, requiredTs, str, ts } from '../../src/store/values.js';
import { logChanges } from '../../src/simulator/change-log.js';
import { registerSimKind, type SimKind, type SimRecord, type SimWorld } from '../../src/simulator/index.js';

/*
 * A third record type, declared only here (issue 47): tasks, listed at GET /tasks, read at
 * GET /tasks/:id, logged as task.created / task.updated / task.deleted, kept in `tasks` with the
 * history of their status in `task_history`. Nothing in src/ names it, so a path of the engine
 * that spells tickets or deals instead of going through the registry fails the fixture's suite.
 */

// ---- The client's side: what the upstream serves (src/api/schemas.ts for a built-in type).

const taskSchema = z.object({
  id,
  title: z.string().nullable(),
  status: z.string().nullable(),
  dueOn: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Task = z.output<typeof taskSchema>;

const TASK_LIST: ListSource<Task> = { path: '/api/v1/tasks', key: 'tasks', entityType: 'task', schema: taskSchema };
const TASK_READ: RecordSource<Task> = { collection: 'tasks', key: 'task', entityType: 'task', schema: taskSchema };

// ---- The mirror's tables (beside the entity for a built-in type too; created by the test, no migration).

const text = { type: 'text', nullable: true } as const;
export const TASK_TABLES = {
  tasks: {
    columns: {
      id: { type: 'text', nullable: false },
      title: text,
      status: text,
      due_on: { type: 'date', nullable: true },
      ...recordStamps,
    },
    primaryKey: ['id'],
    indexes: [],
  },
  task_history: historyTable('task_id', 'task_history'),
} as const satisfies Record<string, TableDecl>;

// ---- The declaration, whole (src/entities/<type>.ts and its store half in src/store/record-stores.ts for a built-in one).

const taskRow = rowMapping<{ t: Task; syncedAt: string }>()('tasks', TASK_TABLES.tasks, {
  id: ({ t }) => String(t.id),
  title: ({ t }) => str(t.title),
  status: ({ t }) => str(t.status),
  due_on: ({ t }) => dateOnly(t.dueOn, 'dueOn'),
  created_at: ({ t }) => ts(t.createdAt, 'createdAt'),
  updated_at: ({ t }) => requiredTs(t.updatedAt, 'updatedAt'),
  deleted_at: () => null,
  synced_at: ({ syncedAt }) => syncedAt,
  raw_json: ({ t }) => json(t),
});

const names = {
  type: registeredName('task'),
  plural: registeredName('tasks'),
  table: registeredName('tasks'),
  historyTable: registeredName('task_history'),
  historyOwner: registeredName('task_id'),
};

export const task: RecordDeclaration<Task, Task> = {
  ...names,
  tables: TASK_TABLES,
  list: TASK_LIST,
  single: TASK_READ,
  childTables: [],
  tracked: [{ field: 'status', name: 'status', value: 'text' }],
  metricLabel: 'task',
  // A list item is the whole task: nothing only the read by id shows.
  touchesUnlisted: () => false,
  listable: () => true,
  fromList: (_held, items) => Promise.resolve({ copies: items.map((t) => ({ id: t.id, record: t })), readById: [] }),
  // Its store: written and compared from the table's declaration and the row a copy makes.
  ...declaredRecordStore<Task, { row: ReturnType<typeof taskRow> }>({
    type: names.type,
    table: names.table,
    decl: TASK_TABLES.tasks,
    prepare: (t, syncedAt) => ({ row: taskRow({ t, syncedAt }) }),
  }),
};

// ---- The simulator's side (src/simulator/kinds.ts for a built-in kind): it shares nothing with the above.

interface SimTask extends SimRecord {
  title: string;
  status: string;
  dueOn: string | null;
  createdAtMs: number;
  gone: boolean;
}

const wire = (t: SimTask) => ({
  id: t.id,
  title: t.title,
  status: t.status,
  dueOn: t.dueOn,
  createdAt: new Date(t.createdAtMs).toISOString(),
  updatedAt: new Date(t.updatedAtMs).toISOString(),
});
const body = (t: SimTask) => JSON.stringify({ task: wire(t) });
const notFound = (taskId: string) => ({
  status: 404,
  body: JSON.stringify({ error: { code: 'not_found', message: `no task ${taskId}` } }),
});

/** One write of a task through the kind table, logged as `type` with `payload`. */
const write = (world: SimWorld, t: SimTask, change: (t: SimTask) => void, type: string, payload: object) =>
  world.writeRecord('task', t, body, change, { type, payload });

type TaskInput = { title?: string; status?: string; dueOn?: string | null } | undefined;

/** A page of the list, newest-updated first; the cursor is the offset of the next page. */
function listTasks(world: SimWorld, query: Record<string, string | undefined>) {
  const limit = Math.min(Math.max(Number(query.limit ?? 50) || 50, 1), 100);
  const offset = Number(query.cursor ?? 0) || 0;
  const all = world.kinds.of('task').index.newestFirst() as SimTask[];
  const page = all.slice(offset, offset + limit).map(wire);
  const next = offset + limit < all.length ? String(offset + limit) : null;
  return { status: 200, body: JSON.stringify({ tasks: page, nextCursor: next }) };
}

function createTask(world: SimWorld, input: TaskInput) {
  const tasks = world.kinds.of('task');
  const t: SimTask = {
    id: world.ids.next('task'),
    title: '',
    status: 'open',
    dueOn: null,
    createdAtMs: world.clock.nowMs(),
    updatedAtMs: 0,
    keyHistory: [],
    corrupt: null,
    gone: false,
  };
  tasks.add(t);
  write(world, t, (x) => Object.assign(x, { title: input?.title ?? '', dueOn: input?.dueOn ?? null }), 'task.created', {});
  return { status: 201, body: body(t) };
}

/** An update, logged as the world's dialect logs any kind's field changes (a `task.updated`, or opaque). */
function updateTask(world: SimWorld, t: SimTask, input: TaskInput) {
  const changes = (['title', 'status', 'dueOn'] as const)
    .filter((key) => input?.[key] !== undefined && input[key] !== t[key])
    .map((field) => ({ field, from: t[field], to: input![field] }));
  const ms = world.clock.nowMs();
  world.beginWrite('task', t, () => Buffer.from(body(t)));
  Object.assign(t, input);
  world.commitWrite('task', t, ms);
  logChanges(world, 'task', t.id, changes, null, ms);
  return { status: 200, body: body(t) };
}

export const taskKind: SimKind<SimTask> = {
  name: 'task',
  collection: 'tasks',
  served: (t) => !t.gone,
  dedicatedTypes: {},
  setCorruption: () => {
    throw new Error('the fixture serves no corrupt task');
  },
  route(world, req, taskId, sub) {
    if (sub !== undefined) return notFound(taskId ?? '');
    if (taskId === undefined) return req.method === 'POST' ? createTask(world, req.body as TaskInput) : listTasks(world, req.query);
    const t = world.kinds.of('task').records.get(taskId) as SimTask | undefined;
    if (!t || t.gone) return notFound(taskId);
    if (req.method === 'PATCH') return updateTask(world, t, req.body as TaskInput);
    if (req.method === 'DELETE') {
      write(world, t, (x) => (x.gone = true), 'task.deleted', {});
      return { status: 200, body: JSON.stringify({ deleted: true }) };
    }
    return { status: 200, body: body(t) };
  },
};

let registered = false;

/** Registers the fixture on both sides, once per test process (each test file runs in its own). */
export function registerTaskFixture(): void {
  if (registered) return;
  registered = true;
  registerSimKind(taskKind);
  registerRecordType(task);
}
