import { mkdtempSync, rmSync } from 'node:fs';
import { afterEach, beforeEach } from 'vitest';
import { forwardTo } from '../helpers/forward.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Deal, TicketWithMessages, WorkspaceEvent } from '../../src/api/types.js';
import { openStore, type Store, type StoreTx, type UpsertResult } from '../../src/store/index.js';
import type { MirroredRecord, RecordType } from '../../src/entities/index.js';
import type { Dialect } from '../helpers/dialects.js';

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-store-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A migrated store in a fresh temp dir for every test of the calling describe block, closed and
 * removed after each. `store` forwards to the current test's store.
 */
export function useFreshStore(): { store: Store; dir: () => string } {
  let tmp: ReturnType<typeof tempDir> | null = null;
  let current: Store | null = null;
  beforeEach(async () => {
    tmp = tempDir();
    current = await freshStore(tmp.dir);
  });
  afterEach(async () => {
    await current?.close();
    tmp?.cleanup();
  });
  const store = forwardTo((): Store => {
    if (!current) throw new Error('the store opens in beforeEach; use it inside a test');
    return current;
  });
  return { store, dir: () => tmp!.dir };
}

/**
 * A migrated store on a fresh database of `dialect` for every test of the calling describe block,
 * closed and dropped after each: the suites that run once per dialect. Forwards to the current one.
 */
export function useDialectStore(dialect: Dialect): Store {
  let current: Store | null = null;
  let drop: (() => Promise<void>) | null = null;
  beforeEach(async () => {
    const db = await dialect.newDatabase();
    drop = db.drop;
    current = await openStore({ database: db.database });
    await current.migrate();
  });
  afterEach(async () => {
    await current?.close();
    await drop?.();
    current = null;
  });
  return forwardTo((): Store => {
    if (!current) throw new Error('the store opens in beforeEach; use it inside a test');
    return current;
  });
}

export async function freshStore(dir: string, name = 'mirror.sqlite'): Promise<Store> {
  const store = await openStore({ database: join(dir, 'nested', name) });
  await store.migrate();
  return store;
}

export function ticket(overrides: Partial<TicketWithMessages> = {}): TicketWithMessages {
  return {
    id: 't1',
    number: 1,
    key: '#1',
    subject: 'Printer on fire',
    status: 'open',
    priority: 'normal',
    summary: null,
    tags: ['hardware', 'urgent'],
    fields: { plan: 'pro', seats: 12, vip: true, meta: { a: 1 } },
    contact: { id: 'c1', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    assignee: { id: 'u1', name: 'Agent One', email: 'one@example.com' },
    team: { id: 'team1', name: 'Tier 1' },
    cc: [],
    messageCount: 2,
    sla: { firstReplyDueAt: '2024-05-01T10:00:00Z', resolveDueAt: null, firstReplyBreachedAt: null, resolveBreachedAt: null },
    firstAgentReplyAt: null,
    resolvedAt: null,
    statusChangedAt: '2024-05-01T09:00:00.000Z',
    createdAt: '2024-05-01T09:00:00.000Z',
    updatedAt: '2024-05-01T09:00:00.000Z',
    messages: [
      {
        id: 'm1',
        body: 'hello',
        authorType: 'customer',
        author: null,
        isInternal: false,
        attachments: [],
        createdAt: '2024-05-01T09:00:00.000Z',
      },
      {
        id: 'm2',
        body: 'note',
        authorType: 'agent',
        author: { id: 'u2', name: 'Agent Two', email: null },
        isInternal: true,
        attachments: [{ name: 'x.png' }],
        createdAt: '2024-05-01T09:05:00.000Z',
      },
    ],
    ...overrides,
  };
}

export function deal(overrides: Partial<Deal> = {}): Deal {
  return {
    id: 'd1',
    name: 'Big deal',
    amount: '1234.50',
    currency: 'EUR',
    closeDate: '2024-06-30',
    status: 'open',
    pipeline: { id: 'p1', name: 'Sales' },
    stage: { id: 's1', name: 'Lead', position: 0, isWon: false, isLost: false },
    owner: { id: 'u9', name: 'Owner', email: 'owner@example.com' },
    company: { id: 'co1', name: 'ACME', domain: 'acme.test' },
    contacts: [
      { id: 'c1', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', isPrimary: false },
      { id: 'c2', firstName: 'Bob', lastName: null, email: null, isPrimary: true },
    ],
    fields: { source: 'web' },
    createdAt: '2024-05-01T09:00:00.000Z',
    updatedAt: '2024-05-01T09:00:00.000Z',
    ...overrides,
  };
}

export function statusEvent(id: string, ticketId: string, from: string, to: string, occurredAt: string): WorkspaceEvent {
  return {
    id,
    type: 'ticket.status_changed',
    entityType: 'ticket',
    entityId: ticketId,
    payload: { from, to },
    actor: { id: 'u1', name: 'Agent One', email: null },
    occurredAt,
  };
}

export const SYNCED = '2024-05-02T00:00:00.000Z';

/** An ISO time in the mirror's stored form (docs/schema.md). */
export const stored = (iso: string) => `${new Date(iso).toISOString().slice(0, 10)} ${new Date(iso).toISOString().slice(11, 23)}`;

/** Writes one record as the sync does (StoreTx.upsertRecords, through the entity registry) and returns its outcome. */
export async function upsertOne(tx: StoreTx, type: RecordType, record: MirroredRecord, syncedAt: string): Promise<UpsertResult> {
  return (await tx.upsertRecords(type, [record], syncedAt))[0]!;
}
