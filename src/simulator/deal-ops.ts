import { checkFields } from './catalog.js';
import { logChanges, stageMovePayload } from './change-log.js';
import { ApiError, Issues, notFound } from './errors.js';
import { asBody, has, stringList, text, type Body } from './input.js';
import type { Deal, FieldChange, Pipeline, Stage } from './model.js';
import { dealBody, formatCents } from './render.js';
import type { World } from './world.js';

const AMOUNT = /^\d{1,13}(\.\d{1,2})?$/;

/** Amount in cents; null clears; undefined when absent or invalid (an issue is added). */
function amountCents(body: Body, issues: Issues): number | null | undefined {
  if (!has(body, 'amount')) return undefined;
  const v = body.amount;
  if (v === null) return null;
  const s = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : undefined;
  if (s === undefined || !AMOUNT.test(s)) {
    issues.add('amount', 'must be a non-negative number or decimal string with at most two decimals, or null');
    return undefined;
  }
  const [whole, frac = ''] = s.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}

function closeDate(body: Body, issues: Issues): string | null | undefined {
  const v = text(body, 'closeDate', issues, { nullable: true });
  if (v === undefined || v === null) return v;
  const d = new Date(`${v}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) {
    issues.add('closeDate', 'must be a date yyyy-mm-dd or null');
    return undefined;
  }
  return v;
}

function currency(body: Body, issues: Issues): string | undefined {
  const v = text(body, 'currency', issues);
  if (v === undefined || v === null) return undefined;
  if (!/^[A-Za-z]{3}$/.test(v)) {
    issues.add('currency', 'must be an ISO 4217 code such as USD');
    return undefined;
  }
  return v.toUpperCase();
}

/** A stage of `pipeline` by id, or by name (exact first, then case-insensitive). */
function findStage(pipeline: Pipeline, ref: string): Stage | undefined {
  return (
    pipeline.stages.find((s) => s.id === ref) ??
    pipeline.stages.find((s) => s.name === ref) ??
    pipeline.stages.find((s) => s.name.toLowerCase() === ref.toLowerCase())
  );
}

interface CommonInput {
  name?: string | undefined;
  amountCents?: number | null | undefined;
  currency?: string | undefined;
  closeDate?: string | null | undefined;
  stage?: Stage | undefined;
  ownerId?: string | null | undefined;
  companyId?: string | null | undefined;
  contactIds?: string[] | undefined;
  fields?: Record<string, unknown> | undefined;
}

function readCommon(world: World, body: Body, pipeline: Pipeline | undefined, issues: Issues, nameRequired: boolean): CommonInput {
  const name = text(body, 'name', issues, { required: nameRequired });
  if (!nameRequired && name !== undefined && name !== null && name.trim() === '') issues.add('name', 'must not be empty');
  const out: CommonInput = {
    name: name ?? undefined,
    amountCents: amountCents(body, issues),
    currency: currency(body, issues),
    closeDate: closeDate(body, issues),
    ownerId: text(body, 'ownerId', issues, { nullable: true }),
    companyId: text(body, 'companyId', issues, { nullable: true }),
    contactIds: stringList(body, 'contactIds', issues),
    fields: has(body, 'fields') ? checkFields(world.customFields.deal, body.fields, issues) : undefined,
  };
  if (has(body, 'stage')) {
    const ref = body.stage;
    if (typeof ref !== 'string') issues.add('stage', 'must be a stage id or name');
    else if (pipeline) {
      out.stage = findStage(pipeline, ref);
      if (!out.stage) issues.add('stage', `no stage of pipeline ${pipeline.id} has this id or name`);
    }
  }
  if (out.ownerId != null && !world.members.has(out.ownerId)) issues.add('ownerId', 'no member has this id');
  if (out.companyId != null && !world.companies.has(out.companyId)) issues.add('companyId', 'no company has this id');
  if (out.contactIds) {
    out.contactIds = [...new Set(out.contactIds)];
    for (const id of out.contactIds) if (!world.contacts.has(id)) issues.add('contactIds', `no contact has the id ${id}`);
  }
  return out;
}

export function findDeal(world: World, id: string): Deal {
  const d = world.deals.get(id);
  if (!d || d.deleted) throw notFound('deal', id);
  return d;
}

function pipelineOf(world: World, id: string): Pipeline {
  return world.pipelines.find((p) => p.id === id) as Pipeline;
}

export function createDeal(world: World, actor: string, input: unknown): Deal {
  const body = asBody(input);
  const issues = new Issues();
  let pipeline: Pipeline | undefined = world.pipelines[0];
  if (has(body, 'pipelineId')) {
    pipeline = typeof body.pipelineId === 'string' ? world.pipelines.find((p) => p.id === body.pipelineId) : undefined;
    if (!pipeline) issues.add('pipelineId', 'no pipeline has this id');
  }
  const c = readCommon(world, body, pipeline, issues, true);
  issues.throwIfAny();
  if (!pipeline) throw new ApiError(422, 'validation_failed', 'The workspace has no pipeline.');
  const stage = c.stage ?? pipeline.stages[0];
  if (!stage) throw new ApiError(422, 'validation_failed', 'The pipeline has no stage.');
  const ms = world.clock.nowMs();
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c.fields ?? {})) if (v !== null) fields[k] = v;
  const d: Deal = {
    id: world.ids.next('deal'),
    name: c.name as string,
    amountCents: c.amountCents ?? null,
    currency: c.currency ?? 'USD',
    closeDate: c.closeDate ?? null,
    stageId: stage.id,
    pipelineId: pipeline.id,
    ownerId: c.ownerId ?? null,
    companyId: c.companyId ?? null,
    contactIds: c.contactIds ?? [],
    fields,
    createdAtMs: ms,
    updatedAtMs: ms,
    keyHistory: [],
    corrupt: null,
    deleted: false,
  };
  world.addDeal(d);
  pipeline.dealCount++;
  world.emit('deal.created', 'deal', d.id, { name: d.name, pipelineId: pipeline.id, stageId: stage.id }, actor, ms);
  world.commitWrite('deal', d, ms);
  return d;
}

export function updateDeal(world: World, actor: string, id: string, input: unknown): Deal {
  const d = findDeal(world, id);
  const body = asBody(input);
  const issues = new Issues();
  if (has(body, 'pipelineId') && body.pipelineId !== d.pipelineId)
    issues.add('pipelineId', 'cannot be changed; move the deal to a stage of its own pipeline');
  const c = readCommon(world, body, pipelineOf(world, d.pipelineId), issues, false);
  issues.throwIfAny();

  const changes: Record<string, { from: unknown; to: unknown }> = {};
  const note = (field: string, from: unknown, to: unknown): void => {
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  };
  const money = (cents: number | null): string | null => (cents === null ? null : formatCents(cents));
  if (c.name !== undefined) note('name', d.name, c.name);
  if (c.amountCents !== undefined) note('amount', money(d.amountCents), money(c.amountCents));
  if (c.currency !== undefined) note('currency', d.currency, c.currency);
  if (c.closeDate !== undefined) note('closeDate', d.closeDate, c.closeDate);
  if (c.ownerId !== undefined) note('ownerId', d.ownerId, c.ownerId);
  if (c.companyId !== undefined) note('companyId', d.companyId, c.companyId);
  if (c.contactIds !== undefined) note('contactIds', d.contactIds, c.contactIds);
  const nextFields = { ...d.fields };
  for (const [k, v] of Object.entries(c.fields ?? {})) {
    note(`fields.${k}`, d.fields[k] ?? null, v);
    if (v === null) delete nextFields[k];
    else nextFields[k] = v;
  }
  const stageMove = c.stage !== undefined && c.stage.id !== d.stageId;
  if (Object.keys(changes).length === 0 && !stageMove) return d;

  const ms = world.clock.nowMs();
  world.beginWrite('deal', d, () => dealBody(world, d));
  if (changes.name) d.name = c.name as string;
  if (changes.amount) d.amountCents = c.amountCents ?? null;
  if (changes.currency) d.currency = c.currency as string;
  if (changes.closeDate) d.closeDate = c.closeDate ?? null;
  if (changes.ownerId) d.ownerId = c.ownerId ?? null;
  if (changes.companyId) d.companyId = c.companyId ?? null;
  if (changes.contactIds) d.contactIds = c.contactIds as string[];
  d.fields = nextFields;
  // The log order of the original dialect: other fields, then the stage.
  const logged: FieldChange[] = Object.entries(changes).map(([field, v]) => ({ field, from: v.from, to: v.to }));
  const from = d.stageId;
  if (stageMove) {
    d.stageId = (c.stage as Stage).id;
    logged.push({ field: 'stageId', from, to: d.stageId });
  }
  logChanges(world, 'deal', d.id, logged, actor, ms);
  // The document says a stage move is logged on every linked contact's timeline.
  if (stageMove)
    for (const contactId of d.contactIds)
      world.emit('contact.activity_logged', 'contact', contactId, stageMovePayload(world, d.id, from, d.stageId), actor, ms);
  world.commitWrite('deal', d, ms);
  return d;
}

export function deleteDeal(world: World, actor: string | null, id: string): void {
  const d = findDeal(world, id);
  const ms = world.clock.nowMs();
  world.beginWrite('deal', d, () => dealBody(world, d));
  d.deleted = true;
  pipelineOf(world, d.pipelineId).dealCount--;
  world.deletedDealIds.push(d.id);
  world.emit('deal.deleted', 'deal', d.id, { name: d.name }, actor, ms);
  world.commitWrite('deal', d, ms);
}

export function setDealCorruption(world: World, id: string, how: Deal['corrupt']): void {
  const d = findDeal(world, id);
  const ms = world.clock.nowMs();
  world.beginWrite('deal', d, () => dealBody(world, d));
  d.corrupt = how;
  world.emit('deal.updated', 'deal', d.id, {}, null, ms);
  world.commitWrite('deal', d, ms);
}
