/**
 * The lean floor's conversion (bench/floor.ts): API answers into the mirror's rows with the least
 * work that still fills every column wsmirror fills (docs/schema.md). It trusts the simulator's
 * answers: no checks, timestamps cut rather than parsed.
 */

export type Value = string | number | null;
type Row = Value[];
type Item = Record<string, unknown>;

/** The tables the floor writes, in an order their foreign keys accept, with their columns. */
export const TABLES = [
  { name: 'users', columns: ['id', 'name', 'email'] },
  { name: 'contacts', columns: ['id', 'first_name', 'last_name', 'email'] },
  { name: 'companies', columns: ['id', 'name', 'domain'] },
  { name: 'pipelines', columns: ['id', 'name', 'deal_count', 'position', 'raw_json'] },
  { name: 'stages', columns: ['id', 'pipeline_id', 'name', 'position', 'is_won', 'is_lost', 'raw_json'] },
  {
    name: 'events',
    columns: ['id', 'type', 'entity_type', 'entity_id', 'payload_json', 'actor_id', 'occurred_at', 'received_at', 'raw_json'],
  },
  {
    name: 'deals',
    columns: [
      'id',
      'name',
      'amount',
      'amount_cents',
      'currency',
      'close_date',
      'status',
      'pipeline_id',
      'stage_id',
      'owner_id',
      'company_id',
      'fields_json',
      'created_at',
      'updated_at',
      'synced_at',
      'raw_json',
    ],
  },
  { name: 'deal_contacts', columns: ['deal_id', 'contact_id', 'is_primary', 'position'] },
  { name: 'deal_fields', columns: ['deal_id', 'key', 'value_text', 'value_json'] },
  {
    name: 'tickets',
    columns: [
      'id',
      'number',
      'key',
      'subject',
      'status',
      'priority',
      'summary',
      'contact_id',
      'assignee_id',
      'team_id',
      'team_name',
      'team_json',
      'tags_json',
      'fields_json',
      'cc_json',
      'message_count',
      'first_reply_due_at',
      'resolve_due_at',
      'first_reply_breached_at',
      'resolve_breached_at',
      'first_agent_reply_at',
      'resolved_at',
      'status_changed_at',
      'created_at',
      'updated_at',
      'synced_at',
      'raw_json',
    ],
  },
  {
    name: 'ticket_messages',
    columns: ['id', 'ticket_id', 'body', 'author_type', 'author_id', 'is_internal', 'attachments_json', 'created_at', 'raw_json'],
  },
  { name: 'ticket_tags', columns: ['ticket_id', 'tag'] },
  { name: 'ticket_fields', columns: ['ticket_id', 'key', 'value_text', 'value_json'] },
] as const;

type TableName = (typeof TABLES)[number]['name'];

/** The columns of one of the floor's tables, in the order its rows give them. */
export const columnsOf = (table: string): readonly string[] => TABLES.find((t) => t.name === table)!.columns;

/** One group's rows per table. */
export class Rows {
  private readonly tables = new Map<TableName, Row[]>();
  count = 0;

  add(table: TableName, row: Row): void {
    let list = this.tables.get(table);
    if (!list) this.tables.set(table, (list = []));
    list.push(row);
    this.count++;
  }

  /** A table's rows; none for a table the floor does not write (a record type it has no converter for). */
  of(table: string): readonly Row[] {
    return this.tables.get(table as TableName) ?? [];
  }
}

const J = (v: unknown): string => JSON.stringify(v);
const text = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v);
const obj = (v: unknown): Item | null => (v !== null && typeof v === 'object' ? (v as Item) : null);
const idOf = (v: unknown): string | null => text(obj(v)?.id);

/**
 * Converters for one run. The references (users, contacts, companies) are written once each: the
 * floor fills an empty mirror, so the first copy seen is the one stored. `specOnly` stores only
 * the raw copies the schema requires (docs/schema.md marks the rest *extra*): no `ticket_messages.raw_json` (an extra
 * column of wsmirror's, docs/schema.md) and a ticket's `raw_json` without its messages, to see
 * what the least raw JSON the contract allows would save.
 */
export function toRows(dialect: 'sqlite' | 'postgres', now: string, specOnly = false) {
  // SQLite stores the 23-character text form (docs/schema.md); PostgreSQL parses ISO 8601 itself.
  const ts = dialect === 'sqlite' ? (v: unknown) => (typeof v === 'string' ? `${v.slice(0, 10)} ${v.slice(11, 23)}` : null) : text;
  const seen = new Set<string>();
  const once = (kind: string, id: string | null) => {
    if (id === null || seen.has(`${kind}:${id}`)) return false;
    seen.add(`${kind}:${id}`);
    return true;
  };
  const user = (u: unknown, rows: Rows) => {
    const o = obj(u);
    if (o && once('user', idOf(o))) rows.add('users', [idOf(o), text(o.name), text(o.email)]);
  };
  const contact = (c: unknown, rows: Rows) => {
    const o = obj(c);
    if (o && once('contact', idOf(o))) rows.add('contacts', [idOf(o), text(o.firstName), text(o.lastName), text(o.email)]);
  };
  const fields = (table: 'deal_fields' | 'ticket_fields', id: unknown, f: unknown, rows: Rows) => {
    for (const [k, v] of Object.entries(obj(f) ?? {}))
      rows.add(table, [
        String(id),
        k,
        typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : null,
        J(v ?? null),
      ]);
  };
  return {
    event(e: Item, rows: Rows) {
      user(e.actor, rows);
      rows.add('events', [
        text(e.id),
        text(e.type),
        text(e.entityType),
        text(e.entityId),
        J(e.payload ?? null),
        idOf(e.actor),
        ts(e.occurredAt),
        ts(now),
        J(e),
      ]);
    },
    pipeline(p: Item, position: number, rows: Rows) {
      rows.add('pipelines', [text(p.id), text(p.name), typeof p.dealCount === 'number' ? p.dealCount : null, position, J(p)]);
      for (const s of (p.stages as Item[]) ?? [])
        rows.add('stages', [text(s.id), text(p.id), text(s.name), s.position as number, s.isWon ? 1 : 0, s.isLost ? 1 : 0, J(s)]);
    },
    deal(d: Item, rows: Rows) {
      user(d.owner, rows);
      const company = obj(d.company);
      if (company && once('company', idOf(company))) rows.add('companies', [idOf(company), text(company.name), text(company.domain)]);
      const amount = text(d.amount);
      rows.add('deals', [
        text(d.id),
        text(d.name),
        amount === null ? null : dialect === 'sqlite' ? Number(amount) : amount,
        amount === null ? null : Math.round(Number(amount) * 100),
        text(d.currency),
        text(d.closeDate),
        text(d.status),
        idOf(d.pipeline),
        idOf(d.stage),
        idOf(d.owner),
        idOf(company),
        J(d.fields ?? {}),
        ts(d.createdAt),
        ts(d.updatedAt),
        ts(now),
        J(d),
      ]);
      ((d.contacts as Item[]) ?? []).forEach((c, i) => {
        contact(c, rows);
        rows.add('deal_contacts', [text(d.id), idOf(c), c.isPrimary ? 1 : 0, i]);
      });
      fields('deal_fields', d.id, d.fields, rows);
    },
    ticket(t: Item, rows: Rows) {
      contact(t.contact, rows);
      user(t.assignee, rows);
      const team = obj(t.team);
      const sla = obj(t.sla) ?? {};
      rows.add('tickets', [
        text(t.id),
        typeof t.number === 'number' ? t.number : null,
        text(t.key),
        text(t.subject),
        text(t.status),
        text(t.priority),
        text(t.summary),
        idOf(t.contact),
        idOf(t.assignee),
        idOf(team),
        text(team?.name),
        team ? J(team) : null,
        J(t.tags ?? []),
        J(t.fields ?? {}),
        J(t.cc ?? []),
        typeof t.messageCount === 'number' ? t.messageCount : null,
        ts(sla.firstReplyDueAt),
        ts(sla.resolveDueAt),
        ts(sla.firstReplyBreachedAt),
        ts(sla.resolveBreachedAt),
        ts(t.firstAgentReplyAt),
        ts(t.resolvedAt),
        ts(t.statusChangedAt),
        ts(t.createdAt),
        ts(t.updatedAt),
        ts(now),
        J(specOnly ? { ...t, messages: undefined } : t),
      ]);
      for (const m of (t.messages as Item[]) ?? []) {
        user(m.author, rows);
        rows.add('ticket_messages', [
          text(m.id),
          text(t.id),
          text(m.body),
          text(m.authorType),
          idOf(m.author),
          m.isInternal ? 1 : 0,
          J(m.attachments ?? []),
          ts(m.createdAt),
          specOnly ? null : J(m),
        ]);
      }
      for (const tag of new Set((t.tags as string[]) ?? [])) rows.add('ticket_tags', [text(t.id), tag]);
      fields('ticket_fields', t.id, t.fields, rows);
    },
  };
}
