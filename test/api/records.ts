/** Valid upstream records per docs/upstream.md ("Records"), with overrides for the bad-data cases. */
export const T = '2024-05-01T12:00:00.000Z';

export function ticket(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 't_1',
    number: 1,
    key: '#1',
    subject: 'Printer on fire',
    status: 'open',
    priority: 'high',
    summary: null,
    tags: ['hw'],
    fields: { plan: 'pro' },
    contact: { id: 'c_1', firstName: 'Ada', lastName: 'L', email: 'a@x.io' },
    assignee: null,
    team: null,
    cc: [],
    messageCount: 1,
    sla: { firstReplyDueAt: T, resolveDueAt: null, firstReplyBreachedAt: null, resolveBreachedAt: null },
    firstAgentReplyAt: null,
    resolvedAt: null,
    statusChangedAt: T,
    createdAt: T,
    updatedAt: T,
    ...over,
  };
}

export function message(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'm_1',
    body: 'hi',
    authorType: 'agent',
    author: { id: 'u_1', name: 'Bo', email: null },
    isInternal: false,
    attachments: [],
    createdAt: T,
    ...over,
  };
}

export function deal(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'd_1',
    name: 'Big deal',
    amount: '1200.50',
    currency: 'EUR',
    closeDate: '2024-06-30',
    status: 'open',
    pipeline: { id: 'p_1', name: 'Sales' },
    stage: { id: 's_1', name: 'Lead', position: 0, isWon: false, isLost: false },
    owner: { id: 'u_1', name: 'Bo', email: 'bo@x.io' },
    company: { id: 'co_1', name: 'Acme', domain: 'acme.io' },
    contacts: [{ id: 'c_1', firstName: 'Ada', lastName: 'L', email: 'a@x.io', isPrimary: true }],
    fields: {},
    createdAt: T,
    updatedAt: T,
    ...over,
  };
}

export function event(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'e_1',
    type: 'ticket.status_changed',
    entityType: 'ticket',
    entityId: 't_1',
    payload: { from: 'open', to: 'solved' },
    actor: null,
    occurredAt: T,
    ...over,
  };
}
