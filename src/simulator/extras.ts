/**
 * Unknown fields of the `extraFields` dialect: what a real workspace adds beyond docs/upstream.md
 * (links, metrics, settings). Every object kind gets its own plausible set, mixing strings,
 * numbers, booleans, nested objects, arrays and null. Values derive from the object's id, so a
 * record's answer is the same on every read (and cacheable). None of them is a timestamp.
 */

/** FNV-1a of the id: a stable small number to vary the values by. */
function hash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const CHANNELS = ['email', 'web', 'chat', 'api'] as const;
const ROLES = ['agent', 'admin', 'lead'] as const;
const COLORS = ['#4f46e5', '#0ea5e9', '#22c55e', '#f59e0b', '#ef4444', '#64748b'] as const;

export function ticketExtras(id: string, number: number, messageCount: number): Record<string, unknown> {
  const h = hash(id);
  return {
    channel: CHANNELS[h % CHANNELS.length],
    url: `https://workspace.example/tickets/${number}`,
    satisfaction: h % 3 === 0 ? null : { score: 1 + (h % 5), comment: h % 2 === 0 ? 'Quick and helpful' : null },
    followerIds: [],
    metrics: { replies: Math.max(0, messageCount - 1), reopens: h % 3, handleMinutes: (h % 900) / 10 },
    customStatusId: null,
  };
}

export function userExtras(id: string): Record<string, unknown> {
  const h = hash(id);
  return { avatarUrl: `https://cdn.workspace.example/avatars/${id}.png`, role: ROLES[h % ROLES.length], active: h % 7 !== 0 };
}

export function contactExtras(id: string): Record<string, unknown> {
  const h = hash(id);
  return { phone: h % 2 === 0 ? null : `+1-555-01${String(h % 100).padStart(2, '0')}`, locale: 'en-US', tags: [] };
}

export function teamExtras(id: string): Record<string, unknown> {
  return { icon: null, settings: { roundRobin: hash(id) % 2 === 0, maxOpenPerAgent: 25 } };
}

export function slaExtras(priority: string): Record<string, unknown> {
  return { policy: { id: `slap_${priority}`, name: `${priority[0]?.toUpperCase() ?? ''}${priority.slice(1)} priority` }, paused: false };
}

export function ccExtras(email: string): Record<string, unknown> {
  return { type: 'cc', domain: email.split('@')[1] ?? null };
}

export function attachmentExtras(id: string): Record<string, unknown> {
  return { url: `https://files.workspace.example/${id}`, thumbnailUrl: null, scanned: true };
}

export function messageExtras(id: string, body: string): Record<string, unknown> {
  const h = hash(id);
  return {
    channel: CHANNELS[h % CHANNELS.length],
    htmlBody: `<p>${body.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`,
    inReplyTo: null,
    metadata: { clientIp: null, userAgent: h % 2 === 0 ? 'Mail/16.0' : 'Mozilla/5.0', spamScore: (h % 100) / 100 },
  };
}

export function dealExtras(id: string, amountCents: number | null, probability: number): Record<string, unknown> {
  const h = hash(id);
  const weighted = amountCents === null ? null : Math.round((amountCents * probability) / 100);
  return {
    weightedAmount: weighted === null ? null : `${Math.floor(weighted / 100)}.${String(weighted % 100).padStart(2, '0')}`,
    lostReason: null,
    labels: h % 3 === 0 ? ['strategic'] : [],
    url: `https://workspace.example/deals/${id}`,
    visibility: h % 2 === 0 ? 'everyone' : 'owner',
  };
}

export function pipelineRefExtras(isDefault: boolean): Record<string, unknown> {
  return { isDefault };
}

export function pipelineExtras(isDefault: boolean, position: number): Record<string, unknown> {
  return { isDefault, position, currency: 'USD', archived: false, settings: { rottingDays: 30 + position * 15 } };
}

export function stageExtras(id: string, position: number, isWon: boolean, isLost: boolean): Record<string, unknown> {
  return {
    color: COLORS[hash(id) % COLORS.length],
    probability: isWon ? 100 : isLost ? 0 : Math.min(90, 10 + position * 20),
    rottingDays: isWon || isLost ? null : 14,
  };
}

export function companyExtras(id: string): Record<string, unknown> {
  const h = hash(id);
  return { industry: ['software', 'retail', 'health', 'energy'][h % 4], employees: 10 + (h % 5000), address: null };
}

export function dealContactExtras(id: string): Record<string, unknown> {
  return { role: hash(id) % 2 === 0 ? 'decision_maker' : null, phone: null };
}

export function eventExtras(id: string, automated: boolean): Record<string, unknown> {
  return { source: automated ? 'automation' : 'api', version: 2, context: { requestId: `req_${id.slice(4)}`, ip: null }, relatedIds: [] };
}

/** Added to every answer's envelope (list or single record). */
export function envelopeExtras(kind: string, count?: number, limit?: number): Record<string, unknown> {
  const meta: Record<string, unknown> = { apiVersion: '2024-06-01', object: kind };
  if (count !== undefined) meta.count = count;
  if (limit !== undefined) meta.limit = limit;
  return { meta, links: { docs: 'https://developers.workspace.example/api/v1' }, warnings: [] };
}

/** The extras of an envelope as JSON to splice in before its closing brace (`,"meta":...`). */
export function envelopeExtrasJson(kind: string, count?: number, limit?: number): string {
  return `,${JSON.stringify(envelopeExtras(kind, count, limit)).slice(1, -1)}`;
}
