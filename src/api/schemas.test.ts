import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { amountSchema, dealSchema, eventSchema, pipelineSchema, ticketSchema, ticketWithMessagesSchema } from './schemas.js';
import { formatReason, validateItems, validateRecord } from './validate.js';

import { deal, message, T, ticket } from '../../test/api/records.js';

describe('ticket schema', () => {
  it('keeps unknown extra fields, at the top and nested', () => {
    const t = ticketSchema.parse(
      ticket({ brandNew: { x: 1 }, contact: { id: 'c_1', firstName: 'A', lastName: null, email: null, vip: true } }),
    );
    expect(t.brandNew).toEqual({ x: 1 });
    expect(t.contact?.vip).toBe(true);
  });

  it('accepts unknown statuses and priorities as plain strings', () => {
    const t = ticketSchema.parse(ticket({ status: 'waiting_on_moon', priority: 'P0' }));
    expect([t.status, t.priority]).toEqual(['waiting_on_moon', 'P0']);
  });

  it('defaults fields the mirror can do without', () => {
    const raw = ticket();
    for (const k of ['summary', 'tags', 'fields', 'team', 'cc', 'sla', 'assignee', 'key', 'firstAgentReplyAt']) delete raw[k];
    const t = ticketSchema.parse({ ...raw, cc: null, tags: null });
    expect(t).toMatchObject({
      summary: null,
      tags: [],
      fields: {},
      team: null,
      cc: [],
      sla: null,
      assignee: null,
      key: '#1',
      firstAgentReplyAt: null,
    });
  });

  it('accepts any team object and any cc elements', () => {
    const t = ticketSchema.parse(ticket({ team: { id: 'tm', members: [1, 2] }, cc: ['x@y', { email: 'z' }, 3] }));
    expect(t.team).toEqual({ id: 'tm', members: [1, 2] });
    expect(t.cc).toHaveLength(3);
  });

  it.each([
    ['updatedAt', 'yesterday', /updatedAt: not a valid ISO 8601 timestamp \(got "yesterday"\)/],
    ['updatedAt', '2024-05-01T12:00:00', /updatedAt: not a valid ISO 8601/], // no zone: ambiguous
    ['updatedAt', '2024-13-45T99:00:00Z', /updatedAt: not a real calendar instant: month 13 does not exist/],
    ['createdAt', undefined, /createdAt: is missing/],
    ['id', '', /id: must be a non-empty id/],
    ['id', 42, /id: must be a string id/],
    ['number', '7', /number: must be an integer/],
    ['messageCount', 1.5, /messageCount: must be an integer/],
    ['resolvedAt', 'soon', /resolvedAt: not a valid/],
    ['tags', ['ok', 3], /tags\.1/],
    ['fields', 'nope', /fields/],
  ])('rejects %s = %j', (field, value, reason) => {
    const r = validateRecord('ticket', ticketSchema, ticket({ [field]: value }));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.invalid.reason).toMatch(reason);
  });

  it('checks timestamps inside sla', () => {
    const r = validateRecord('ticket', ticketSchema, ticket({ sla: { firstReplyDueAt: 'tomorrow' } }));
    expect(!r.ok && r.invalid.reason).toMatch(/^sla\.firstReplyDueAt: /);
  });

  it('accepts offsets and second precision', () => {
    expect(ticketSchema.safeParse(ticket({ updatedAt: '2024-05-01T14:00:00+02:00' })).success).toBe(true);
    expect(ticketSchema.safeParse(ticket({ updatedAt: '2024-05-01T12:00:00Z' })).success).toBe(true);
  });
});

describe('impossible instants are refused, never rolled over (issue 26)', () => {
  const impossible = [
    '2026-11-31T12:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T12:60:00Z',
    '2026-02-29T00:00:00Z',
  ];
  const sla = (field: string, v: string) => ({ sla: { ...(ticket().sla as object), [field]: v } });
  const cases: (readonly [string, (v: string) => Record<string, unknown>, z.ZodType, RegExp])[] = [
    ...['createdAt', 'updatedAt', 'firstAgentReplyAt', 'resolvedAt', 'statusChangedAt'].map(
      (f) => [f, (v: string) => ticket({ [f]: v }), ticketSchema, new RegExp(`^${f}: not a real calendar instant`)] as const,
    ),
    ...['firstReplyDueAt', 'resolveDueAt', 'firstReplyBreachedAt', 'resolveBreachedAt'].map(
      (f) => [`sla.${f}`, (v: string) => ticket(sla(f, v)), ticketSchema, new RegExp(`^sla\\.${f}: not a real calendar instant`)] as const,
    ),
    [
      'messages.0.createdAt',
      (v) => ({ ...ticket(), messages: [message({ createdAt: v })] }),
      ticketWithMessagesSchema,
      /^messages\.0\.createdAt: not a real/,
    ],
    ...['createdAt', 'updatedAt'].map(
      (f) => [`deal ${f}`, (v: string) => deal({ [f]: v }), dealSchema, new RegExp(`^${f}: not a real`)] as const,
    ),
    [
      'event occurredAt',
      (v) => ({ id: 'e', type: 'deal.updated', entityType: 'deal', entityId: 'd', payload: {}, occurredAt: v }),
      eventSchema,
      /^occurredAt: not a real/,
    ],
  ];
  it.each(cases.flatMap(([name, make, schema, reason]) => impossible.map((v) => [name, v, make, schema, reason] as const)))(
    '%s = %s',
    (_name, value, make, schema, reason) => {
      const r = validateRecord('ticket', schema, make(value));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.invalid.reason).toMatch(reason);
    },
  );

  it('a closeDate that is not a real date', () => {
    for (const v of ['2026-02-29', '2026-11-31', '2026-13-01']) {
      const r = validateRecord('deal', dealSchema, deal({ closeDate: v }));
      expect(!r.ok && r.invalid.reason).toMatch(/^closeDate: must be a real yyyy-mm-dd calendar date/);
    }
    expect(dealSchema.safeParse(deal({ closeDate: '2024-02-29' })).success).toBe(true);
  });

  it('accepts every legitimate form: any fraction digits, Z or an offset, with or without seconds', () => {
    for (const v of [
      '2026-11-30T12:00:00Z',
      '2026-11-30T12:00:00.1Z',
      '2026-11-30T12:00:00.123456Z',
      '2026-11-30T12:00:00+00:00',
      '2026-11-30T14:00:00+0200',
      '2026-11-30T12:00Z',
      '2024-02-29T12:00:00-05:00',
    ])
      expect(ticketSchema.safeParse(ticket({ updatedAt: v })).success, v).toBe(true);
  });
});

describe('ticket with messages', () => {
  it('parses messages and keeps their extras', () => {
    const t = ticketWithMessagesSchema.parse({
      ...ticket(),
      messages: [message({ channel: 'email' }), message({ id: 'm_2', author: null, attachments: undefined })],
    });
    expect(t.messages.map((m) => m.id)).toEqual(['m_1', 'm_2']);
    expect(t.messages[0]?.channel).toBe('email');
    expect(t.messages[1]?.attachments).toEqual([]);
    expect(t.key).toBe('#1');
  });

  it('makes the whole ticket invalid when one message is', () => {
    const r = validateRecord('ticket', ticketWithMessagesSchema, {
      ...ticket(),
      messages: [message(), message({ id: 'm_2', isInternal: 'yes' })],
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.invalid).toMatchObject({ entityType: 'ticket', id: 't_1', reason: 'messages.1.isInternal: must be a boolean' });
  });

  it('requires messages', () => {
    expect(ticketWithMessagesSchema.safeParse(ticket()).success).toBe(false);
  });
});

describe('deal amount', () => {
  it.each([
    ['1200.50', '1200.50'],
    ['12.5', '12.50'],
    ['12', '12.00'],
    [12.5, '12.50'],
    [12, '12.00'],
    [0.1, '0.10'],
    [-3.25, '-3.25'],
    [null, null],
    [undefined, null],
  ])('normalises %j to %j', (input, out) => {
    expect(amountSchema.parse(input)).toBe(out);
  });

  it.each([[Number.NaN], [Number.POSITIVE_INFINITY], [12.345], ['12.345'], ['1e3'], [1e21], ['12,50'], [''], [true], [0.1 + 0.2]])(
    'rejects %j',
    (input) => {
      expect(amountSchema.safeParse(input).success).toBe(false);
    },
  );

  it('reports the amount field in the reason', () => {
    const r = validateRecord('deal', dealSchema, deal({ amount: '1.234' }));
    expect(!r.ok && r.invalid.reason).toBe('amount: must be a decimal with at most two decimals (got "1.234")');
  });
});

describe('deal schema', () => {
  it('parses a deal and keeps extras, unknown status ok', () => {
    const d = dealSchema.parse(deal({ status: 'frozen', probability: 0.4, amount: 99 }));
    expect(d).toMatchObject({ status: 'frozen', probability: 0.4, amount: '99.00' });
  });

  it('rejects a bad closeDate and a non-boolean stage flag', () => {
    expect(dealSchema.safeParse(deal({ closeDate: '30/06/2024' })).success).toBe(false);
    expect(dealSchema.safeParse(deal({ stage: { id: 's', name: 'x', position: 0, isWon: 'no', isLost: false } })).success).toBe(false);
  });

  it('defaults optional relations', () => {
    const raw = deal();
    for (const k of ['owner', 'company', 'contacts', 'fields', 'currency', 'closeDate', 'amount']) delete raw[k];
    expect(dealSchema.parse(raw)).toMatchObject({
      owner: null,
      company: null,
      contacts: [],
      fields: {},
      currency: null,
      closeDate: null,
      amount: null,
    });
  });
});

describe('event and pipeline schemas', () => {
  const event = {
    id: 'e_1',
    type: 'spaceship.launched',
    entityType: 'spaceship',
    entityId: 'x',
    payload: { from: 1, to: 2 },
    actor: null,
    occurredAt: T,
  };

  it('stores unknown event and entity types as they come', () => {
    expect(eventSchema.parse(event)).toMatchObject({ type: 'spaceship.launched', entityType: 'spaceship' });
    expect(eventSchema.parse({ ...event, payload: null }).payload).toEqual({});
  });

  it('rejects an event without occurredAt', () => {
    const { occurredAt: _, ...rest } = event;
    expect(eventSchema.safeParse(rest).success).toBe(false);
  });

  it('validates pipelines with their stages', () => {
    const p = { id: 'p', name: 'Sales', dealCount: 3, stages: [{ id: 's', name: 'Lead', position: 0, isWon: false, isLost: false }] };
    expect(pipelineSchema.safeParse(p).success).toBe(true);
    expect(pipelineSchema.safeParse({ ...p, dealCount: 'three' }).success).toBe(false);
  });
});

describe('validateItems', () => {
  it('quarantines bad items one by one with id, reason and raw', () => {
    const bad = ticket({ id: 't_2', updatedAt: 'nope' });
    const { items, invalid } = validateItems('ticket', ticketSchema, [ticket(), bad, 'junk', ticket({ id: 't_3' })]);
    expect(items.map((t) => t.id)).toEqual(['t_1', 't_3']);
    expect(invalid).toEqual([
      { entityType: 'ticket', id: 't_2', reason: 'updatedAt: not a valid ISO 8601 timestamp (got "nope")', raw: bad },
      { entityType: 'ticket', id: null, reason: expect.stringMatching(/^\(record\): /), raw: 'junk' },
    ]);
  });

  it('keeps reasons short when many fields are wrong', () => {
    const r = ticketSchema.safeParse({ id: 'x' });
    expect(r.success).toBe(false);
    if (!r.success) expect(formatReason(r.error, { id: 'x' })).toMatch(/; and \d+ more$/);
  });
});
