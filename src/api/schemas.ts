/**
 * Validation of upstream records (docs/upstream.md, "Records"; docs/design.md §4.5). Loose objects keep unknown
 * fields for the raw JSON; what the mirror stores in typed columns is checked strictly (ids,
 * timestamps, numbers, booleans); status/priority/type strings are open sets. A field the mirror
 * can do without may be missing and defaults to null / [] / {}.
 */
import { z } from 'zod';
import { canonicalInstant, isCalendarDate, readInstant, rememberCheckedInstant } from '../util/time.js';
import { MAX_ID_CHARS, quote } from './json-bounds.js';
import { unsafePathSegment } from './path-ids.js';
import type { ListSource, RecordSource } from './types.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DECIMAL = /^-?\d+(\.\d{1,2})?$/;

// Native on Node 20 (not yet in the ES2023 lib types).
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

// PostgreSQL text cannot hold U+0000, nor any store a lone UTF-16 surrogate as valid text, and an
// id is a key: it cannot be cleaned without becoming another id, so a record or event whose id
// holds one is quarantined.
export const id = z
  .string({ error: 'must be a string id' })
  .min(1, { error: 'must be a non-empty id' })
  .max(MAX_ID_CHARS, { error: `must be at most ${MAX_ID_CHARS} characters` })
  .refine((v) => !v.includes('\u0000'), { error: 'must not contain U+0000' })
  .refine(wellFormed, { error: 'must be valid Unicode (it holds a lone UTF-16 surrogate)' });

/** A ticket's or deal's own id, which goes into a request path (src/api/path-ids.ts). */
const recordId = id.superRefine((v, ctx) => {
  const unsafe = unsafePathSegment(v);
  if (unsafe !== null) ctx.addIssue({ code: 'custom', message: `is not a safe path segment: ${unsafe} (got ${quote(v)})` });
});

/**
 * Why a timestamp cannot be stored, or null when it can: it must be ISO 8601 with a zone (a
 * zoneless time would be read as local time and land in the wrong place), a real calendar instant
 * (readInstant: 31 November or hour 24 is never rolled over into another day), and representable
 * in both stores, a UTC year from 1 to 9999 (docs/sync.md, "Hostile upstream").
 */
function timestampProblem(v: string): string | null {
  // The canonical form's year is its UTC year: only 0000 is out of range.
  if (canonicalInstant(v) !== null && !v.startsWith('0000')) return null;
  const read = /^\d{4}-\d{2}-\d{2}[Tt]/.test(v) ? readInstant(v) : null;
  if (read === null || (!read.ok && !read.impossible)) return `not a valid ISO 8601 timestamp (got ${quote(v)})`;
  if (!read.ok) return `not a real calendar instant: ${read.why} (got ${quote(v)})`;
  const year = new Date(read.ms).getUTCFullYear();
  if (year < 1 || year > 9999) return `out of range: not between years 1 and 9999 in UTC (got ${quote(v)})`;
  rememberCheckedInstant(v, read.ms);
  return null;
}

export const timestamp = z.string({ error: 'must be an ISO 8601 timestamp string' }).refine((v) => timestampProblem(v) === null, {
  error: (iss) => (typeof iss.input === 'string' ? (timestampProblem(iss.input) ?? 'invalid') : 'must be an ISO 8601 timestamp string'),
});

const nullableTimestamp = timestamp.nullable().default(null);
const optionalString = z.string().nullable().default(null);
const int = z.int({ error: 'must be an integer' });
const bool = z.boolean({ error: 'must be a boolean' });
const jsonObject = z.record(z.string(), z.unknown());
/** Missing or null -> {}; anything but an object is still an error. */
const objectOrEmpty = jsonObject.nullish().transform((v) => v ?? {});
const unknownArray = z
  .array(z.unknown())
  .nullish()
  .transform((v) => v ?? []);

export const userRefSchema = z.looseObject({ id, name: optionalString, email: optionalString });

export const contactRefSchema = z.looseObject({
  id,
  firstName: optionalString,
  lastName: optionalString,
  email: optionalString,
});

export const slaSchema = z.looseObject({
  firstReplyDueAt: nullableTimestamp,
  resolveDueAt: nullableTimestamp,
  firstReplyBreachedAt: nullableTimestamp,
  resolveBreachedAt: nullableTimestamp,
});

const ticketShape = {
  id: recordId,
  number: int,
  key: z.string().optional(),
  subject: z.string({ error: 'must be a string' }),
  status: z.string({ error: 'must be a string' }),
  priority: z.string({ error: 'must be a string' }),
  summary: optionalString,
  tags: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? []),
  fields: objectOrEmpty,
  contact: contactRefSchema.nullable().default(null),
  assignee: userRefSchema.nullable().default(null),
  // A shape the upstream does not promise: kept as JSON; `id`/`name` are used when present.
  team: jsonObject.nullable().default(null),
  cc: unknownArray,
  messageCount: int.nonnegative(),
  sla: slaSchema.nullable().default(null),
  firstAgentReplyAt: nullableTimestamp,
  resolvedAt: nullableTimestamp,
  statusChangedAt: nullableTimestamp,
  createdAt: timestamp,
  updatedAt: timestamp,
};

// `key` is the number prefixed with `#` by definition, so a server that leaves it out loses nothing.
const withKey = <T extends { key?: string | undefined; number: number }>(t: T) => ({ ...t, key: t.key ?? `#${t.number}` });

export const ticketSchema = z.looseObject(ticketShape).transform(withKey);

export const messageSchema = z.looseObject({
  id,
  body: z.string({ error: 'must be a string' }),
  authorType: z.string({ error: 'must be a string' }),
  author: userRefSchema.nullable().default(null),
  isInternal: bool,
  attachments: unknownArray,
  createdAt: timestamp,
});

// `messages` is validated together with the ticket: one bad message makes the whole read invalid
// (the mirror cannot store half a conversation).
export const ticketWithMessagesSchema = z
  .looseObject({ ...ticketShape, messages: z.array(messageSchema, { error: 'must be an array of messages' }) })
  .transform(withKey);

export const stageSchema = z.looseObject({ id, name: z.string(), position: int, isWon: bool, isLost: bool });

export const pipelineSchema = z.looseObject({
  id,
  name: z.string(),
  dealCount: int.nonnegative(),
  stages: z.array(stageSchema),
});

/**
 * The document promises a decimal string with two decimals; a lax server may send a number or
 * fewer decimals. Both become the two-decimal string; more than two decimals, exponents and
 * non-finite numbers are rejected (the mirror stores amounts exactly, it does not round).
 */
export const amountSchema = z
  .union([z.string(), z.number()], { error: 'must be a decimal string, a number or null' })
  .nullable()
  .default(null)
  .transform((v, ctx) => {
    if (v === null) return null;
    const text = typeof v === 'number' ? String(v) : v.trim();
    if (typeof v === 'number' && !Number.isFinite(v)) {
      ctx.addIssue({ code: 'custom', message: `must be a finite amount (got ${text})` });
      return z.NEVER;
    }
    if (!DECIMAL.test(text)) {
      ctx.addIssue({ code: 'custom', message: `must be a decimal with at most two decimals (got ${quote(v)})` });
      return z.NEVER;
    }
    const [whole, frac = ''] = text.split('.');
    return `${whole}.${frac.padEnd(2, '0')}`;
  });

const closeDate = z
  .string()
  .refine((v) => DATE_ONLY.test(v) && isCalendarDate(v), {
    error: (iss) => `must be a real yyyy-mm-dd calendar date (got ${quote(iss.input)})`,
  })
  .nullable()
  .default(null);

export const companySchema = z.looseObject({ id, name: optionalString, domain: optionalString });

export const dealContactSchema = z.looseObject({
  id,
  firstName: optionalString,
  lastName: optionalString,
  email: optionalString,
  isPrimary: bool,
});

export const dealSchema = z.looseObject({
  id: recordId,
  name: z.string({ error: 'must be a string' }),
  amount: amountSchema,
  currency: optionalString,
  closeDate,
  // `open`, `won`, `lost`, or anything else a server sends: stored as it comes (docs/design.md §4.5).
  status: z.string({ error: 'must be a string' }),
  pipeline: z.looseObject({ id, name: optionalString }),
  stage: stageSchema,
  owner: userRefSchema.nullable().default(null),
  company: companySchema.nullable().default(null),
  contacts: z
    .array(dealContactSchema)
    .nullish()
    .transform((v) => v ?? []),
  fields: objectOrEmpty,
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const eventSchema = z.looseObject({
  id,
  type: z.string({ error: 'must be a string' }),
  entityType: z.string({ error: 'must be a string' }),
  entityId: id,
  payload: objectOrEmpty,
  actor: userRefSchema.nullable().default(null),
  occurredAt: timestamp,
});

/*
 * The record types are what the schemas yield (`z.output`): declared once, so a field added to a
 * schema is a field of the type, and a new entity's type is one line beside its schema. Every
 * object keeps the fields the schema does not list (loose objects), so the raw JSON stored in the
 * mirror loses nothing; timestamps are ISO 8601 strings as received (checked, not reformatted).
 */
export type UserRef = z.output<typeof userRefSchema>;
export type ContactRef = z.output<typeof contactRefSchema>;
export type Sla = z.output<typeof slaSchema>;
/** A ticket list item: no messages (only `GET /tickets/:id` carries them). */
export type Ticket = z.output<typeof ticketSchema>;
export type Message = z.output<typeof messageSchema>;
export type TicketWithMessages = z.output<typeof ticketWithMessagesSchema>;
export type Stage = z.output<typeof stageSchema>;
export type Pipeline = z.output<typeof pipelineSchema>;
export type Company = z.output<typeof companySchema>;
export type DealContact = z.output<typeof dealContactSchema>;
export type Deal = z.output<typeof dealSchema>;
export type WorkspaceEvent = z.output<typeof eventSchema>;

/** Where tickets and deals are read (docs/upstream.md, "Endpoints read" and "Paging"); src/entities names them. */
export const TICKET_LIST: ListSource<Ticket> = { path: '/api/v1/tickets', key: 'tickets', entityType: 'ticket', schema: ticketSchema };
export const TICKET_READ: RecordSource<TicketWithMessages> = {
  collection: 'tickets',
  key: 'ticket',
  entityType: 'ticket',
  schema: ticketWithMessagesSchema,
};
export const DEAL_LIST: ListSource<Deal> = { path: '/api/v1/deals', key: 'deals', entityType: 'deal', schema: dealSchema };
export const DEAL_READ: RecordSource<Deal> = { collection: 'deals', key: 'deal', entityType: 'deal', schema: dealSchema };
export const EVENT_LIST: ListSource<WorkspaceEvent> = { path: '/api/v1/events', key: 'events', entityType: 'event', schema: eventSchema };
