import { logsOriginalForm } from './dialect.js';
import type { FieldChange, SimEvent } from './model.js';
import type { DialectOptions } from './types.js';
import type { World } from './world.js';

/**
 * How field changes become change-log events under the dialect's `changeEvents`,
 * `opaquePayload`, `changeFieldNames` and `changeValues`. Live writes, automations and the seeded
 * history all log through here, so the whole log speaks one dialect.
 */

/** An event to log for a write, before it gets its id, actor and time. */
export interface ChangeDraft {
  type: string;
  payload: Record<string, unknown>;
  /** The changes it logs, kept when the payload is not in the original form (truth reads them). */
  changes?: FieldChange[];
}

const API_NAMES: Record<string, string> = {
  assigneeId: 'assignee',
  teamId: 'team',
  stageId: 'stage',
  ownerId: 'owner',
  companyId: 'company',
  contactIds: 'contacts',
};

const SNAKE_NAMES: Record<string, string> = {
  assigneeId: 'assignee_id',
  teamId: 'team_id',
  stageId: 'stage_id',
  ownerId: 'owner_id',
  companyId: 'company_id',
  contactIds: 'contact_ids',
  closeDate: 'close_date',
};

const LABELS: Record<string, string> = {
  status: 'Status',
  priority: 'Priority',
  assigneeId: 'Assignee',
  teamId: 'Team',
  subject: 'Subject',
  summary: 'Summary',
  tags: 'Tags',
  name: 'Name',
  amount: 'Amount',
  currency: 'Currency',
  closeDate: 'Close date',
  stageId: 'Stage',
  ownerId: 'Owner',
  companyId: 'Company',
  contactIds: 'Contacts',
};

/** The name a payload gives an internal field name (custom fields keep `fields.<key>`). */
export function fieldName(d: DialectOptions, field: string): string {
  if (d.changeFieldNames === 'api') return API_NAMES[field] ?? field;
  if (d.changeFieldNames === 'snake') return SNAKE_NAMES[field] ?? field;
  return field;
}

/** A reference as the `refs` form shows it; an id the workspace does not know keeps a null name. */
function ref(world: World, field: string, id: string): { id: string; name: string | null } {
  let name: string | undefined;
  if (field === 'assigneeId' || field === 'ownerId') name = world.members.get(id)?.name;
  else if (field === 'teamId') name = world.teams.get(id)?.name;
  else if (field === 'stageId') name = world.stages.get(id)?.name;
  else if (field === 'companyId') name = world.companies.get(id)?.name;
  else if (field === 'contactIds') {
    const c = world.contacts.get(id);
    name = c ? `${c.firstName} ${c.lastName}`.trim() : undefined;
  }
  return { id, name: name ?? null };
}

/** A from/to value as the dialect shows it. */
function shown(world: World, field: string, value: unknown): unknown {
  if (world.dialect.changeValues !== 'refs' || value === null || !(field in API_NAMES)) return value;
  if (Array.isArray(value)) return value.map((id) => ref(world, field, id as string));
  return ref(world, field, value as string);
}

function fromTo(world: World, c: FieldChange): { from: unknown; to: unknown } {
  return { from: shown(world, c.field, c.from), to: shown(world, c.field, c.to) };
}

function label(field: string): string {
  return LABELS[field] ?? (field.startsWith('fields.') ? `Custom field ${field.slice('fields.'.length)}` : field);
}

/** "Status updated", "Status and priority updated", "Status, priority and team updated". */
function opaqueSummary(changes: FieldChange[]): string {
  const words = changes.map((c, i) => (i === 0 ? label(c.field) : label(c.field).replace(/^[A-Z]/, (x) => x.toLowerCase())));
  const head = words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}` : (words[0] ?? '');
  return `${head} updated`;
}

/** The events that log one write's `changes` (in the order given), made by one actor at one time. */
export function changeDrafts(world: World, entity: string, changes: FieldChange[]): ChangeDraft[] {
  if (changes.length === 0) return [];
  const dedicated = world.kinds.of(entity).kind.dedicatedTypes;
  const d = world.dialect;
  const keep = !logsOriginalForm(d);
  if (d.changeEvents !== 'dedicated') {
    const payload: Record<string, unknown> = {};
    if (d.changeEvents === 'updated') for (const c of changes) payload[fieldName(d, c.field)] = fromTo(world, c);
    else if (d.opaquePayload === 'changed') payload.changed = changes.map((c) => fieldName(d, c.field));
    else payload.summary = opaqueSummary(changes);
    return [{ type: `${entity}.updated`, payload, changes }];
  }
  const out: ChangeDraft[] = [];
  let rest: ChangeDraft | undefined;
  for (const c of changes) {
    const type = dedicated[c.field];
    if (type !== undefined) {
      out.push(keep ? { type, payload: fromTo(world, c), changes: [c] } : { type, payload: fromTo(world, c) });
      continue;
    }
    if (rest === undefined) {
      rest = keep ? { type: `${entity}.updated`, payload: {}, changes: [] } : { type: `${entity}.updated`, payload: {} };
      out.push(rest);
    }
    rest.payload[fieldName(d, c.field)] = fromTo(world, c);
    rest.changes?.push(c);
  }
  return out;
}

/** Logs one write's field changes at `ms`. */
export function logChanges(world: World, entity: string, entityId: string, changes: FieldChange[], actor: string | null, ms: number): void {
  for (const draft of changeDrafts(world, entity, changes)) {
    const e = world.emit(draft.type, entity, entityId, draft.payload, actor, ms);
    if (draft.changes) e.changes = draft.changes;
  }
}

/** The payload of `contact.activity_logged` for a stage move (the contact timeline entry); opaque shows no stages. */
export function stageMovePayload(world: World, dealId: string, from: string, to: string): object {
  if (world.dialect.changeEvents === 'opaque') return { dealId, activity: 'deal_stage_changed' };
  return { dealId, activity: 'deal_stage_changed', from: shown(world, 'stageId', from), to: shown(world, 'stageId', to) };
}

function isFromTo(v: unknown): v is { from: unknown; to: unknown } {
  return typeof v === 'object' && v !== null && 'from' in v && 'to' in v;
}

/**
 * The field changes an event logs: kept ones, else read back from its original-form payload (a
 * kind's dedicated type, or `<kind>.updated`). Events of other entities (contacts) log none; a
 * write that kept changes for a kind the world does not serve fails here.
 */
export function eventChanges(world: World, e: SimEvent): FieldChange[] {
  if (e.injected) return [];
  if (!world.kinds.has(e.entityType)) {
    if (e.changes) world.kinds.of(e.entityType);
    return [];
  }
  if (e.changes) return e.changes;
  const payload = e.payload as Record<string, unknown>;
  const kind = world.kinds.of(e.entityType).kind;
  const single = Object.entries(kind.dedicatedTypes).find(([, type]) => type === e.type)?.[0];
  if (single !== undefined) return isFromTo(payload) ? [{ field: single, from: payload.from, to: payload.to }] : [];
  if (e.type !== `${kind.name}.updated`) return [];
  const out: FieldChange[] = [];
  for (const [field, v] of Object.entries(payload)) if (isFromTo(v)) out.push({ field, from: v.from, to: v.to });
  return out;
}
