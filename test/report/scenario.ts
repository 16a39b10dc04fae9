import type { Store } from '../../src/store/index.js';
import { insertDeal, insertReferenceData, insertTicket } from './rows.js';

/**
 * A hand-written mirror (March 2024, refresh clock 2024-03-06T00:00Z) with one of each case:
 * T1 one-touch solved then closed; T2 first-reply breach, reopen, resolve breach; T3 backfilled
 * (no history) and still pending; T4 deleted; T5 backfilled as solved (no history).
 * Deals: DL1 won (EUR, Feb), DL2 lost (USD, March), DL3 open with a back move, DL4 backfilled won,
 * DL5 deleted, DL6 open without amount or owner.
 */
export const NOW = new Date('2024-03-06T00:00:00.000Z');

const d = (day: number, hm: string) => `2024-03-0${day}T${hm}:00.000Z`;

export async function buildScenario(store: Store): Promise<void> {
  await insertReferenceData(store);
  await insertTicket(store, {
    id: 'T1',
    status: 'closed',
    createdAt: d(1, '09:00'),
    created: true,
    assigneeId: 'u1',
    tags: ['b', 'a'],
    firstAgentReplyAt: d(1, '10:00'),
    resolvedAt: d(1, '12:00'),
    firstReplyDueAt: d(1, '11:00'),
    resolveDueAt: d(2, '09:00'),
    messages: [
      { id: 'm1', authorType: 'customer', authorId: 'c1', at: d(1, '09:00') },
      { id: 'm2', authorType: 'agent', authorId: 'u1', at: d(1, '10:00') },
      { id: 'm3', authorType: 'system', authorId: 'sys', at: d(1, '12:00') },
    ],
    statusMoves: [
      ['open', 'pending', d(1, '10:00')],
      ['pending', 'solved', d(1, '12:00')],
      ['solved', 'closed', d(5, '12:00')],
    ],
    assigneeMoves: [[null, 'u1', d(1, '10:00')]],
  });
  await insertTicket(store, {
    id: 'T2',
    status: 'solved',
    createdAt: d(1, '08:00'),
    created: true,
    assigneeId: 'u2',
    contactId: 'c2',
    firstAgentReplyAt: d(1, '10:30'),
    resolvedAt: d(3, '10:00'),
    firstReplyDueAt: d(1, '09:00'),
    resolveDueAt: d(2, '08:00'),
    firstReplyBreachedAt: d(1, '09:00'),
    resolveBreachedAt: d(2, '08:00'),
    messages: [
      { id: 'm4', authorType: 'customer', authorId: 'c2', at: d(1, '08:00') },
      { id: 'm5', authorType: 'agent', authorId: 'u2', at: d(1, '10:30') },
      { id: 'm6', authorType: 'customer', authorId: 'c2', at: d(2, '14:00') },
      { id: 'm7', authorType: 'agent', authorId: 'u2', internal: true, at: d(2, '16:00') },
      { id: 'm8', authorType: 'agent', authorId: 'u2', at: d(3, '09:30') },
    ],
    statusMoves: [
      ['open', 'pending', d(1, '10:30')],
      ['pending', 'solved', d(2, '09:00'), 'observed'],
      ['solved', 'open', d(2, '15:00')],
      ['open', 'solved', d(3, '10:00')],
    ],
  });
  await insertTicket(store, {
    id: 'T3',
    status: 'pending',
    createdAt: d(2, '11:00'),
    firstAgentReplyAt: d(2, '11:30'),
    firstReplyDueAt: d(2, '12:00'),
    resolveDueAt: d(4, '11:00'),
    messages: [
      { id: 'm9', authorType: 'customer', authorId: 'c1', at: d(2, '11:00') },
      { id: 'm10', authorType: 'agent', authorId: 'u3', at: d(2, '11:30') },
    ],
  });
  await insertTicket(store, {
    id: 'T4',
    status: 'open',
    createdAt: d(1, '07:00'),
    created: true,
    deletedAt: d(1, '07:30'),
    assigneeId: 'u1',
    messages: [{ id: 'm11', authorType: 'agent', authorId: 'u1', at: d(1, '07:10') }],
  });
  await insertTicket(store, {
    id: 'T5',
    status: 'solved',
    createdAt: d(3, '08:00'),
    assigneeId: 'u1',
    firstAgentReplyAt: d(3, '09:00'),
    resolvedAt: d(3, '18:00'),
    messages: [
      { id: 'm12', authorType: 'customer', authorId: 'c1', at: d(3, '08:00') },
      { id: 'm13', authorType: 'agent', authorId: 'u1', at: d(3, '09:00') },
    ],
  });

  await insertDeal(store, {
    id: 'DL1',
    stageId: 's3',
    status: 'won',
    amountCents: 100000,
    currency: 'EUR',
    ownerId: 'o1',
    createdAt: '2024-02-10T10:00:00.000Z',
    created: true,
    contacts: [
      { id: 'c2', primary: false },
      { id: 'c1', primary: true },
    ],
    stageMoves: [
      ['s1', 's2', '2024-02-15T10:00:00.000Z'],
      ['s2', 's3', '2024-02-20T10:00:00.000Z'],
    ],
  });
  await insertDeal(store, {
    id: 'DL2',
    stageId: 's4',
    status: 'lost',
    amountCents: 50050,
    currency: 'USD',
    ownerId: 'o1',
    createdAt: '2024-02-12T00:00:00.000Z',
    created: true,
    stageMoves: [['s1', 's4', '2024-03-02T00:00:00.000Z']],
  });
  await insertDeal(store, {
    id: 'DL3',
    stageId: 's2',
    status: 'open',
    amountCents: 25025,
    currency: 'EUR',
    ownerId: 'o2',
    createdAt: '2024-03-01T12:00:00.000Z',
    created: true,
    stageMoves: [
      ['s1', 's2', '2024-03-03T12:00:00.000Z'],
      ['s2', 's1', '2024-03-04T12:00:00.000Z'],
      ['s1', 's2', '2024-03-05T00:00:00.000Z'],
    ],
  });
  await insertDeal(store, {
    id: 'DL4',
    stageId: 's3',
    status: 'won',
    amountCents: 9999,
    currency: 'USD',
    ownerId: 'o2',
    createdAt: '2024-01-05T00:00:00.000Z',
    updatedAt: '2024-03-01T08:00:00.000Z',
  });
  await insertDeal(store, {
    id: 'DL5',
    stageId: 's3',
    status: 'won',
    amountCents: 700,
    currency: 'EUR',
    ownerId: 'o1',
    createdAt: '2024-02-01T00:00:00.000Z',
    created: true,
    deletedAt: '2024-03-01T00:00:00.000Z',
  });
  await insertDeal(store, {
    id: 'DL6',
    stageId: 's1',
    status: 'open',
    amountCents: null,
    currency: 'USD',
    ownerId: null,
    createdAt: '2024-03-05T12:00:00.000Z',
    created: true,
  });
}
