import type { Kysely } from 'kysely';
import type { TicketWithMessages } from '../api/index.js';
import type { MirrorDatabase, TicketsTable } from './schema.js';
import { upsertContacts, upsertUsers } from './refs.js';
import { diffFields, writeObservedTicketHistory } from './history.js';
import { bool, fieldRows, json, noNul, requiredTs, str, ts, uniqueBy } from './values.js';
import { replaceChildren, type ChildRow, type ChildTable } from './children.js';
import { rowUpsert, run } from './sql.js';

type Db = Kysely<MirrorDatabase>;

export interface UpsertResult {
  /** History rows written for this read. */
  history: number;
  /** True when the mirror already held a newer copy; nothing was written. */
  stale: boolean;
  /**
   * True when a value could not be stored (junk timestamp or amount): nothing was written for the
   * record and it was put in quarantine instead, like a record that failed validation.
   */
  quarantined: boolean;
}

const TRACKED = [
  { column: 'status', field: 'status' },
  { column: 'priority', field: 'priority' },
  { column: 'assignee_id', field: 'assignee_id' },
  { column: 'team_id', field: 'team_id' },
] as const;

function ticketRow(t: TicketWithMessages, syncedAt: string): TicketsTable {
  const team = t.team && typeof t.team === 'object' ? t.team : null;
  const sla = t.sla && typeof t.sla === 'object' ? t.sla : null;
  return {
    id: String(t.id),
    number: typeof t.number === 'number' ? t.number : null,
    key: str(t.key),
    subject: str(t.subject),
    status: str(t.status),
    priority: str(t.priority),
    summary: str(t.summary),
    contact_id: t.contact?.id != null ? String(t.contact.id) : null,
    assignee_id: t.assignee?.id != null ? String(t.assignee.id) : null,
    team_id: team?.id != null ? String(team.id) : null,
    team_name: team?.name != null ? String(team.name) : null,
    team_json: team ? json(team) : null,
    tags_json: json(t.tags ?? []),
    fields_json: json(t.fields ?? {}),
    cc_json: json(t.cc ?? []),
    message_count: typeof t.messageCount === 'number' ? t.messageCount : null,
    first_reply_due_at: ts(sla?.firstReplyDueAt, 'sla.firstReplyDueAt'),
    resolve_due_at: ts(sla?.resolveDueAt, 'sla.resolveDueAt'),
    first_reply_breached_at: ts(sla?.firstReplyBreachedAt, 'sla.firstReplyBreachedAt'),
    resolve_breached_at: ts(sla?.resolveBreachedAt, 'sla.resolveBreachedAt'),
    first_agent_reply_at: ts(t.firstAgentReplyAt, 'firstAgentReplyAt'),
    resolved_at: ts(t.resolvedAt, 'resolvedAt'),
    status_changed_at: ts(t.statusChangedAt, 'statusChangedAt'),
    created_at: ts(t.createdAt, 'createdAt'),
    updated_at: requiredTs(t.updatedAt, 'updatedAt'),
    deleted_at: null,
    synced_at: syncedAt,
    raw_json: json(t),
  };
}

const MESSAGES: ChildTable = {
  table: 'ticket_messages', parent: 'ticket_id', key: 'id', globalKey: true,
  values: ['body', 'author_type', 'author_id', 'is_internal', 'attachments_json', 'created_at', 'raw_json'],
};
const TAGS: ChildTable = { table: 'ticket_tags', parent: 'ticket_id', key: 'tag', values: [] };
const FIELDS: ChildTable = { table: 'ticket_fields', parent: 'ticket_id', key: 'key', values: ['value_text', 'value_json'] };

const PREVIOUS = 'select "status", "priority", "assignee_id", "team_id", "contact_id", "updated_at" from "tickets" where "id" = ?';
type Previous = Pick<TicketsTable, 'status' | 'priority' | 'assignee_id' | 'team_id' | 'contact_id' | 'updated_at'>;

// Column order of ticketRow; the upsert binds each value once and updates from `excluded`, where
// binding the row twice (insert values and update set) doubled the strings sent to the driver.
// The record type makes the compiler reject a column missing here.
const TICKET_COLUMNS = Object.keys({
  id: 0, number: 0, key: 0, subject: 0, status: 0, priority: 0, summary: 0, contact_id: 0, assignee_id: 0, team_id: 0,
  team_name: 0, team_json: 0, tags_json: 0, fields_json: 0, cc_json: 0, message_count: 0, first_reply_due_at: 0,
  resolve_due_at: 0, first_reply_breached_at: 0, resolve_breached_at: 0, first_agent_reply_at: 0, resolved_at: 0,
  status_changed_at: 0, created_at: 0, updated_at: 0, deleted_at: 0, synced_at: 0, raw_json: 0,
} satisfies Record<keyof TicketsTable, 0>) as (keyof TicketsTable)[];
const writeTicket = rowUpsert('tickets', TICKET_COLUMNS, ['status', 'assignee_id', 'contact_id', 'updated_at']);

/**
 * Replaces the mirror's copy of one ticket. Every value is converted before the first write, so a
 * junk value throws StoreError('INVALID_VALUE') with nothing written and the transaction usable.
 */
export async function upsertTicket(db: Db, ticket: TicketWithMessages, syncedAt: string): Promise<UpsertResult> {
  const row = ticketRow(ticket, syncedAt);
  const id = row.id;
  const messages: ChildRow[] = uniqueBy(Array.isArray(ticket.messages) ? ticket.messages : [], (m) => String(m.id)).map((m) => [
    String(m.id),
    str(m.body),
    str(m.authorType),
    m.author?.id != null ? String(m.author.id) : null,
    bool(m.isInternal),
    json(m.attachments ?? []),
    ts(m.createdAt, `message ${String(m.id)} createdAt`),
    json(m),
  ]);
  const tags: ChildRow[] = [...new Set((Array.isArray(ticket.tags) ? ticket.tags : []).map((tag) => noNul(String(tag))))].map((tag) => [tag]);
  const fields: ChildRow[] = fieldRows(ticket.fields).map((f) => [f.key, f.value_text, f.value_json]);

  await run(db, 'delete from "quarantine" where "entity_type" = \'ticket\' and "entity_id" = ?', [id]);

  const [previous] = await run<Previous>(db, PREVIOUS, [id]);
  if (previous?.updated_at && String(previous.updated_at) > row.updated_at!) return { history: 0, stale: true, quarantined: false };

  await upsertUsers(db, [ticket.assignee, ...(ticket.messages ?? []).map((m) => m.author)]);
  await upsertContacts(db, [ticket.contact]);

  await writeTicket(db, row, previous);

  const existed = previous !== undefined;
  await replaceChildren(db, TAGS, id, tags, existed);
  await replaceChildren(db, FIELDS, id, fields, existed);
  await replaceChildren(db, MESSAGES, id, messages, existed);

  if (!previous) return { history: 0, stale: false, quarantined: false };
  const changes = diffFields(previous, row, TRACKED);
  const observedSince = previous.updated_at === null ? null : String(previous.updated_at);
  const history = await writeObservedTicketHistory(db, id, changes, observedSince, row.updated_at!);
  return { history, stale: false, quarantined: false };
}
