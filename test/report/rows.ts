import type { Store } from '../../src/store/index.js';
import { toDbTimestamp } from '../../src/util/time.js';
import { databaseOf } from '../../src/store/internal.js';

/**
 * Direct row writers for the reporting unit tests: the mirror tables are filled as the store
 * would leave them, without going through the API mapping, so each figure's inputs are explicit.
 * Times are given as ISO text and stored in the mirror's form (docs/schema.md).
 */
const T = (v: string | null | undefined): string | null => toDbTimestamp(v ?? null);

let historyEvent = 0;

export interface TicketSpec {
  id: string;
  status: string;
  createdAt: string;
  updatedAt?: string;
  assigneeId?: string | null;
  contactId?: string;
  firstAgentReplyAt?: string | null;
  resolvedAt?: string | null;
  firstReplyDueAt?: string | null;
  resolveDueAt?: string | null;
  firstReplyBreachedAt?: string | null;
  resolveBreachedAt?: string | null;
  deletedAt?: string | null;
  tags?: string[];
  /** Writes the ticket.created event (history complete). */
  created?: boolean;
  messages?: { id: string; authorType: string; authorId: string; internal?: boolean; at: string }[];
  /** status moves: [from, to, at, source] */
  statusMoves?: [string, string, string, ('event' | 'observed')?][];
  assigneeMoves?: [string | null, string | null, string][];
}

export async function insertTicket(store: Store, t: TicketSpec): Promise<void> {
  const db = databaseOf(store);
  await db
    .insertInto('tickets')
    .values({
      id: t.id,
      number: Number(t.id.replace(/\D/g, '')) || 0,
      key: `#${t.id}`,
      subject: `Subject ${t.id}`,
      status: t.status,
      priority: 'normal',
      summary: null,
      contact_id: t.contactId ?? 'c1',
      assignee_id: t.assigneeId ?? null,
      team_id: 'team1',
      team_name: 'Tier 1',
      team_json: null,
      tags_json: JSON.stringify(t.tags ?? []),
      fields_json: '{}',
      cc_json: '[]',
      message_count: t.messages?.length ?? 0,
      first_reply_due_at: T(t.firstReplyDueAt),
      resolve_due_at: T(t.resolveDueAt),
      first_reply_breached_at: T(t.firstReplyBreachedAt),
      resolve_breached_at: T(t.resolveBreachedAt),
      first_agent_reply_at: T(t.firstAgentReplyAt),
      resolved_at: T(t.resolvedAt),
      status_changed_at: T(t.statusMoves?.at(-1)?.[2] ?? t.createdAt),
      created_at: T(t.createdAt),
      updated_at: T(t.updatedAt ?? t.createdAt),
      deleted_at: T(t.deletedAt),
      synced_at: T(t.createdAt),
      raw_json: '{}',
    })
    .execute();
  for (const tag of t.tags ?? []) await db.insertInto('ticket_tags').values({ ticket_id: t.id, tag }).execute();
  for (const m of t.messages ?? []) {
    await db
      .insertInto('ticket_messages')
      .values({
        id: m.id,
        ticket_id: t.id,
        body: 'x',
        author_type: m.authorType,
        author_id: m.authorId,
        is_internal: m.internal ? 1 : 0,
        attachments_json: '[]',
        created_at: T(m.at),
        raw_json: '{}',
      })
      .execute();
  }
  if (t.created) await insertEvent(store, 'ticket.created', 'ticket', t.id, t.createdAt);
  for (const [from, to, at, source] of t.statusMoves ?? []) {
    const src = source ?? 'event';
    await db
      .insertInto('ticket_history')
      .values({
        ticket_id: t.id,
        field: 'status',
        from_value: from,
        to_value: to,
        changed_at: T(at)!,
        source: src,
        event_id: src === 'event' ? `he${++historyEvent}` : null,
        observed_since: null,
      })
      .execute();
  }
  for (const [from, to, at] of t.assigneeMoves ?? []) {
    await db
      .insertInto('ticket_history')
      .values({
        ticket_id: t.id,
        field: 'assignee_id',
        from_value: from,
        to_value: to,
        changed_at: T(at)!,
        source: 'observed',
        event_id: null,
        observed_since: null,
      })
      .execute();
  }
}

let eventSeq = 0;
export async function insertEvent(store: Store, type: string, entityType: string, entityId: string, at: string): Promise<void> {
  await databaseOf(store)
    .insertInto('events')
    .values({
      id: `ev${++eventSeq}`,
      type,
      entity_type: entityType,
      entity_id: entityId,
      payload_json: '{}',
      actor_id: null,
      occurred_at: T(at),
      received_at: T(at),
      raw_json: '{}',
    })
    .execute();
}

export interface DealSpec {
  id: string;
  stageId: string;
  status: 'open' | 'won' | 'lost';
  amountCents: number | null;
  currency: string;
  ownerId: string | null;
  createdAt: string;
  updatedAt?: string;
  deletedAt?: string | null;
  created?: boolean;
  stageMoves?: [string, string, string][];
  contacts?: { id: string; primary: boolean }[];
}

export async function insertDeal(store: Store, d: DealSpec): Promise<void> {
  const amount = d.amountCents === null ? null : `${Math.floor(d.amountCents / 100)}.${String(d.amountCents % 100).padStart(2, '0')}`;
  await databaseOf(store)
    .insertInto('deals')
    .values({
      id: d.id,
      name: `Deal ${d.id}`,
      amount,
      amount_cents: d.amountCents,
      currency: d.currency,
      close_date: '2024-03-31',
      status: d.status,
      pipeline_id: 'p1',
      stage_id: d.stageId,
      owner_id: d.ownerId,
      company_id: 'co1',
      fields_json: '{}',
      created_at: T(d.createdAt),
      updated_at: T(d.updatedAt ?? d.stageMoves?.at(-1)?.[2] ?? d.createdAt),
      deleted_at: T(d.deletedAt),
      synced_at: T(d.createdAt),
      raw_json: '{}',
    })
    .execute();
  for (const [i, c] of (d.contacts ?? []).entries()) {
    await databaseOf(store)
      .insertInto('deal_contacts')
      .values({ deal_id: d.id, contact_id: c.id, is_primary: c.primary ? 1 : 0, position: i })
      .execute();
  }
  if (d.created) await insertEvent(store, 'deal.created', 'deal', d.id, d.createdAt);
  for (const [from, to, at] of d.stageMoves ?? []) {
    await databaseOf(store)
      .insertInto('deal_history')
      .values({
        deal_id: d.id,
        field: 'stage_id',
        from_value: from,
        to_value: to,
        changed_at: T(at)!,
        source: 'observed',
        event_id: null,
        observed_since: null,
      })
      .execute();
  }
}

export async function insertReferenceData(store: Store): Promise<void> {
  const db = databaseOf(store);
  await db
    .insertInto('users')
    .values([
      { id: 'u1', name: 'Una One', email: 'u1@example.com' },
      { id: 'u2', name: 'Udo Two', email: 'u2@example.com' },
      { id: 'u3', name: 'Uma Three', email: 'u3@example.com' },
      { id: 'o1', name: 'Otto Owner', email: 'o1@example.com' },
      { id: 'o2', name: 'Olga Owner', email: 'o2@example.com' },
    ])
    .execute();
  await db
    .insertInto('contacts')
    .values([
      { id: 'c1', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
      { id: 'c2', first_name: 'Bob', last_name: 'Builder', email: 'bob@example.com' },
    ])
    .execute();
  await db.insertInto('companies').values({ id: 'co1', name: 'Acme', domain: 'acme.example' }).execute();
  await db.insertInto('pipelines').values({ id: 'p1', name: 'Sales', deal_count: 5, position: 0, raw_json: null }).execute();
  await db
    .insertInto('stages')
    .values([
      { id: 's1', pipeline_id: 'p1', name: 'Lead', position: 0, is_won: 0, is_lost: 0, raw_json: null },
      { id: 's2', pipeline_id: 'p1', name: 'Proposal', position: 1, is_won: 0, is_lost: 0, raw_json: null },
      { id: 's3', pipeline_id: 'p1', name: 'Won', position: 2, is_won: 1, is_lost: 0, raw_json: null },
      { id: 's4', pipeline_id: 'p1', name: 'Lost', position: 3, is_won: 0, is_lost: 1, raw_json: null },
    ])
    .execute();
}
