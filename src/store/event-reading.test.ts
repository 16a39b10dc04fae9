import { describe, expect, it } from 'vitest';
import { readEvent } from './event-reading.js';
import { trackedFields } from './tracked-fields.js';
import { RECORD_TYPES, type RecordType } from '../entities/index.js';

const ALL_TICKET = ['status', 'priority', 'assignee_id', 'team_id'];
const ALL_DEAL = ['stage_id', 'amount', 'currency', 'close_date', 'owner_id', 'status'];

describe('every spelling of a tracked change reads as the dedicated form does', () => {
  const ref = (id: string) => ({ id, name: `name of ${id}`, extra: [1] });
  // [kind, field, the dedicated event, then every other spelling of the same change]
  const cases: [RecordType, string, [string, unknown], [string, unknown][]][] = [
    [
      'deal',
      'stage_id',
      ['deal.stage_changed', { from: 's1', to: 's2' }],
      [
        ['deal.updated', { stage: { from: 's1', to: 's2' } }],
        ['deal.updated', { stageId: { from: 's1', to: 's2' } }],
        ['deal.updated', { stage_id: { from: 's1', to: 's2' } }],
        ['deal.updated', { StageID: { from: 's1', to: 's2' } }],
        ['deal.updated', { stage: { from: ref('s1'), to: ref('s2') } }],
        ['deal.stage_changed', { from: ref('s1'), to: ref('s2') }],
        ['deal.stage_changed', { stage: { from: 's1', to: 's2' } }],
        ['deal.stageId_changed', { from: 's1', to: 's2' }],
        ['deal.moved', { stage_id: { from: ref('s1'), to: 's2' } }],
      ],
    ],
    [
      'deal',
      'owner_id',
      ['deal.owner_changed', { from: 'u1', to: null }],
      [
        ['deal.updated', { owner: { from: 'u1', to: null } }],
        ['deal.updated', { ownerId: { from: ref('u1'), to: null } }],
        ['deal.updated', { owner_id: { from: 'u1', to: null } }],
      ],
    ],
    [
      'deal',
      'amount',
      ['deal.amount_changed', { from: '1234.5', to: 2000 }],
      [
        ['deal.updated', { amount: { from: 1234.5, to: '2000.00' } }],
        ['deal.updated', { amount: { from: '1234.50', to: '2000' } }],
      ],
    ],
    [
      'deal',
      'currency',
      ['deal.currency_changed', { from: 'USD', to: 'EUR' }],
      [
        ['deal.updated', { currency: { from: 'USD', to: 'EUR' } }],
        ['deal.updated', { Currency: { from: 'USD', to: 'EUR' } }],
        ['deal.updated', { currency_id: { from: { id: 'USD', name: 'US dollar' }, to: 'EUR' } }],
      ],
    ],
    [
      'deal',
      'close_date',
      ['deal.close_date_changed', { from: '2024-06-30', to: null }],
      [
        ['deal.updated', { closeDate: { from: '2024-06-30', to: null } }],
        ['deal.updated', { close_date: { from: '2024-06-30T00:00:00Z', to: null } }],
        ['deal.closeDate_changed', { from: '2024-06-30', to: null }],
      ],
    ],
    ['deal', 'status', ['deal.status_changed', { from: 'open', to: 'won' }], [['deal.updated', { status: { from: 'open', to: 'won' } }]]],
    [
      'ticket',
      'assignee_id',
      ['ticket.assigned', { from: null, to: 'u2' }],
      [
        ['ticket.updated', { assignee: { from: null, to: ref('u2') } }],
        ['ticket.updated', { assigneeId: { from: null, to: 'u2' } }],
        ['ticket.updated', { assignee_id: { from: null, to: 'u2' } }],
        ['ticket.assignee_changed', { from: null, to: 'u2' }],
        ['ticket.reassigned', { from: null, to: ref('u2') }],
      ],
    ],
    [
      'ticket',
      'team_id',
      ['ticket.team_changed', { from: 't1', to: 't2' }],
      [
        ['ticket.updated', { team: { from: ref('t1'), to: ref('t2') } }],
        ['ticket.updated', { teamId: { from: 't1', to: 't2' } }],
        ['ticket.updated', { team_id: { from: 't1', to: 't2' } }],
      ],
    ],
    [
      'ticket',
      'priority',
      ['ticket.priority_changed', { from: 'low', to: 'high' }],
      [['ticket.updated', { priority: { from: 'low', to: 'high' } }]],
    ],
    [
      'ticket',
      'status',
      ['ticket.status_changed', { from: 'open', to: 'solved' }],
      [
        ['ticket.updated', { status: { from: 'open', to: 'solved' } }],
        ['ticket.updated', { status: { from: { id: 'open' }, to: { id: 'solved', label: 'Solved' } } }],
      ],
    ],
  ];
  for (const [kind, field, [type, payload], spellings] of cases) {
    const expected = readEvent(kind, type, payload);
    it(`${kind} ${field}: ${type} tells one change`, () => {
      expect(expected.unreadable).toBeNull();
      expect(expected.changes).toHaveLength(1);
      expect(expected.changes[0]!.field).toBe(field);
    });
    it.each(spellings)(`${kind} ${field}: %s %j`, (t, p) => {
      expect(readEvent(kind, t, p)).toEqual(expected);
    });
  }

  it('several fields in one payload, untracked ones among them', () => {
    const r = readEvent('deal', 'deal.updated', {
      amount: { from: '1.00', to: '2.00' },
      name: { from: 'a', to: 'b' },
      ownerId: { from: 'u1', to: 'u2' },
      'fields.plan': { from: 'a', to: 'b' },
    });
    expect(r).toEqual({
      changes: [
        { field: 'amount', from: '1.00', to: '2.00' },
        { field: 'owner_id', from: 'u1', to: 'u2' },
      ],
      unreadable: null,
    });
  });

  it('every tracked field is covered by a case above', () => {
    const covered = new Set(cases.map(([kind, field]) => `${kind}:${field}`));
    for (const kind of RECORD_TYPES) for (const f of trackedFields(kind)) expect(covered).toContain(`${kind}:${f.field}`);
  });
});

describe('the classifier: what makes a record history incomplete', () => {
  // [kind, type, payload, the fields it may hide (null: complete), why matches]
  const table: [RecordType, string, unknown, string[] | null, RegExp | null][] = [
    // Known verbs that change no tracked field, whatever they carry.
    ...['created', 'replied', 'note_added', 'customer_replied', 'message_removed', 'deleted', 'spam', 'merged'].map(
      (v) => ['ticket', `ticket.${v}`, { messageId: 'm1', whatever: ['x'] }, null, null] as ['ticket', string, unknown, null, null],
    ),
    ['deal', 'deal.created', { name: 'x', stageId: 's1' }, null, null],
    ['deal', 'deal.deleted', {}, null, null],
    // Updates that plainly change only untracked fields.
    ['ticket', 'ticket.updated', { subject: { from: 'a', to: 'b' }, summary: { from: null, to: 'x' } }, null, null],
    ['ticket', 'ticket.updated', { tags: { from: ['a'], to: ['b'] }, 'fields.plan': { from: 'a', to: 'b' } }, null, null],
    ['deal', 'deal.updated', { name: { from: 'a', to: 'b' }, currency: { from: 'EUR', to: 'USD' } }, null, null],
    ['deal', 'deal.updated', { companyId: { from: 'c1', to: null }, contactIds: { from: [], to: ['c2'] } }, null, null],
    ['deal', 'deal.updated', { subject: { to: 'b' } }, null, null],
    // A list of changed field names that names only untracked fields.
    ['ticket', 'ticket.updated', { changed: ['subject', 'tags', 'fields.plan'] }, null, null],
    ['deal', 'deal.updated', { changes: ['name'] }, null, null],
    // A tracked change that is no change.
    ['deal', 'deal.stage_changed', { from: 's1', to: 's1' }, null, null],
    ['deal', 'deal.updated', { stage: { from: { id: 's1' }, to: 's1' } }, null, null],
    // Unreadable: the payload names the change without a readable from/to.
    ['deal', 'deal.updated', { summary: 'Stage updated' }, ALL_DEAL, /summary is "Stage updated", not a \{from, to\} change/],
    ['deal', 'deal.updated', { changed: ['stage'] }, ['stage_id', 'status'], /changed is \["stage"\], naming a change without from\/to/],
    ['ticket', 'ticket.updated', { changed: ['subject', 'assignee'] }, ['assignee_id'], /changed is \["subject","assignee"\]/],
    ['ticket', 'ticket.updated', { changedFields: ['team_id', 'priorityLevel'] }, ['priority', 'team_id'], /changedFields is/],
    ['ticket', 'ticket.updated', { changed: [] }, ALL_TICKET, /changed is \[\], not a \{from, to\} change/],
    ['deal', 'deal.updated', { stage: 's2' }, ['stage_id', 'status'], /stage is "s2", not a readable/],
    ['deal', 'deal.updated', { stage: { to: 's2' } }, ['stage_id', 'status'], /stage is \{"to":"s2"\}/],
    ['deal', 'deal.updated', { stageId: { from: { name: 'Lead' }, to: 's2' } }, ['stage_id', 'status'], /stageId/],
    ['deal', 'deal.updated', { stageName: { from: 'Lead', to: 'Won' } }, ['stage_id', 'status'], /stageName may stand for stage_id/],
    ['deal', 'deal.updated', { pipelineId: { from: 'p1', to: 'p2' } }, ['stage_id', 'status'], /pipelineId may stand for stage_id/],
    ['deal', 'deal.updated', { amount: { from: '1.00', to: 'lots' } }, ['amount'], /amount is/],
    ['deal', 'deal.updated', { amount: { from: '1.00', to: '1.005' } }, ['amount'], /amount is/],
    ['deal', 'deal.updated', { closeDate: { from: null, to: '2026-02-29' } }, ['close_date'], /closeDate is/],
    ['deal', 'deal.updated', { ownerId: { from: 'u1', to: true } }, ['owner_id'], /ownerId is/],
    ['deal', 'deal.updated', {}, ALL_DEAL, /names no field/],
    ['deal', 'deal.updated', null, ALL_DEAL, /names no field/],
    ['deal', 'deal.stage_changed', { to: 's2' }, ['stage_id', 'status'], /not a readable \{from, to\}/],
    ['deal', 'deal.stage_changed', { summary: 'moved' }, ALL_DEAL, /holds no readable \{from, to\} of stage_id/],
    ['deal', 'deal.stage_changed', {}, ALL_DEAL, /names no field/],
    ['deal', 'deal.won', {}, ALL_DEAL, /names no field/],
    ['deal', 'deal.won', { stage: { from: 's1', to: 's9' } }, null, null],
    ['ticket', 'ticket.assigned', { to: 'u1' }, ['assignee_id'], /not a readable/],
    ['ticket', 'ticket.teleported', undefined, ALL_TICKET, /names no field/],
    ['ticket', 'ticket.escalated', { reason: 'vip' }, ALL_TICKET, /reason is "vip"/],
    ['ticket', 'ticket.updated', { teamName: { from: 'a', to: 'b' } }, ['team_id'], /teamName may stand for team_id/],
    // A readable change beside an unreadable key still says the event may hide more.
    ['ticket', 'ticket.updated', { status: { from: 'open', to: 'solved' }, note: 'by rule' }, ALL_TICKET, /note is "by rule"/],
  ];
  it.each(table)('%s %s %j', (kind, type, payload, fields, why) => {
    const r = readEvent(kind, type, payload);
    if (fields === null) expect(r.unreadable).toBeNull();
    else {
      expect(r.unreadable?.fields).toEqual(fields);
      expect(r.unreadable?.why).toMatch(why!);
    }
  });

  it('a readable change is still told when another key hides one', () => {
    const r = readEvent('ticket', 'ticket.updated', { status: { from: 'open', to: 'solved' }, note: 'by rule' });
    expect(r.changes).toEqual([{ field: 'status', from: 'open', to: 'solved' }]);
  });
});
