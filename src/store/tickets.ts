import type { Kysely } from 'kysely';
import type { TicketWithMessages } from '../api/types.js';
import type { MirrorDatabase, TicketsTable } from './schema.js';
import { upsertContacts, upsertUsers } from './refs.js';
import { diffFields, writeObservedTicketHistory } from './history.js';
import { bool, chunks, fieldRows, json, noNul, requiredTs, str, ts, uniqueBy } from './values.js';

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

/**
 * Replaces the mirror's copy of one ticket. Every value is converted before the first write, so a
 * junk value throws StoreError('INVALID_VALUE') with nothing written and the transaction usable.
 */
export async function upsertTicket(db: Db, ticket: TicketWithMessages, syncedAt: string): Promise<UpsertResult> {
  const row = ticketRow(ticket, syncedAt);
  const id = row.id;
  const messages = uniqueBy(Array.isArray(ticket.messages) ? ticket.messages : [], (m) => String(m.id)).map((m) => ({
    id: String(m.id),
    ticket_id: id,
    body: str(m.body),
    author_type: str(m.authorType),
    author_id: m.author?.id != null ? String(m.author.id) : null,
    is_internal: bool(m.isInternal),
    attachments_json: json(m.attachments ?? []),
    created_at: ts(m.createdAt, `message ${String(m.id)} createdAt`),
    raw_json: json(m),
  }));
  const tags = [...new Set((Array.isArray(ticket.tags) ? ticket.tags : []).map((tag) => noNul(String(tag))))];
  const fields = fieldRows(ticket.fields);

  await db.deleteFrom('quarantine').where('entity_type', '=', 'ticket').where('entity_id', '=', id).execute();

  const previous = await db
    .selectFrom('tickets')
    .select(['status', 'priority', 'assignee_id', 'team_id', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (previous?.updated_at && String(previous.updated_at) > row.updated_at!) return { history: 0, stale: true, quarantined: false };

  await upsertUsers(db, [ticket.assignee, ...(ticket.messages ?? []).map((m) => m.author)]);
  await upsertContacts(db, [ticket.contact]);

  const { id: _id, ...update } = row;
  await db.insertInto('tickets').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();

  await db.deleteFrom('ticket_tags').where('ticket_id', '=', id).execute();
  for (const batch of chunks(tags, 400)) {
    await db.insertInto('ticket_tags').values(batch.map((tag) => ({ ticket_id: id, tag }))).execute();
  }
  await db.deleteFrom('ticket_fields').where('ticket_id', '=', id).execute();
  for (const batch of chunks(fields, 200)) {
    await db.insertInto('ticket_fields').values(batch.map((f) => ({ ticket_id: id, ...f }))).execute();
  }

  for (const batch of chunks(messages, 100)) {
    await db
      .insertInto('ticket_messages')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          ticket_id: eb.ref('excluded.ticket_id'),
          body: eb.ref('excluded.body'),
          author_type: eb.ref('excluded.author_type'),
          author_id: eb.ref('excluded.author_id'),
          is_internal: eb.ref('excluded.is_internal'),
          attachments_json: eb.ref('excluded.attachments_json'),
          created_at: eb.ref('excluded.created_at'),
          raw_json: eb.ref('excluded.raw_json'),
        })),
      )
      .execute();
  }
  // Messages gone upstream leave the mirror (SPEC 4.3); the kept ids are compared in JS to avoid
  // a NOT IN list longer than the driver's parameter limit.
  const keep = new Set(messages.map((m) => m.id));
  const existing = await db.selectFrom('ticket_messages').select('id').where('ticket_id', '=', id).execute();
  const gone = existing.map((r) => r.id).filter((mid) => !keep.has(mid));
  for (const batch of chunks(gone, 400)) {
    await db.deleteFrom('ticket_messages').where('id', 'in', batch).execute();
  }

  if (!previous) return { history: 0, stale: false, quarantined: false };
  const changes = diffFields(previous, row, TRACKED);
  const observedSince = previous.updated_at === null ? null : String(previous.updated_at);
  const history = await writeObservedTicketHistory(db, id, changes, observedSince, row.updated_at!);
  return { history, stale: false, quarantined: false };
}
