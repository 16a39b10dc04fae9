import type { Issues } from './errors.js';

/**
 * The workspace's configuration as the simulator defines it, where the upstream leaves
 * it open (docs/upstream.md): statuses and their categories, priorities, custom fields, SLA targets.
 */

export interface StatusDef {
  value: string;
  label: string;
  category: 'unresolved' | 'resolved';
}

export const STATUSES: readonly StatusDef[] = [
  { value: 'open', label: 'Open', category: 'unresolved' },
  { value: 'pending', label: 'Pending', category: 'unresolved' },
  { value: 'on_hold', label: 'On hold', category: 'unresolved' },
  { value: 'solved', label: 'Solved', category: 'resolved' },
  { value: 'closed', label: 'Closed', category: 'resolved' },
];

/** Statuses of the `unlistedValues` dialect: values docs/upstream.md never lists. */
export const UNLISTED_STATUSES: readonly StatusDef[] = [
  { value: 'waiting_on_customer', label: 'Waiting on customer', category: 'unresolved' },
  { value: 'archived', label: 'Archived', category: 'resolved' },
];

const ALL_STATUSES: readonly StatusDef[] = [...STATUSES, ...UNLISTED_STATUSES];

export const DEFAULT_STATUS = 'open';

/**
 * A status by value or label, case-insensitively; undefined when unknown. Unlisted statuses are
 * known only while the workspace has them (`unlisted`).
 */
export function resolveStatus(input: string, unlisted = false): StatusDef | undefined {
  const wanted = input.trim().toLowerCase();
  return (unlisted ? ALL_STATUSES : STATUSES).find((s) => s.value === wanted || s.label.toLowerCase() === wanted);
}

/** The category of a status a ticket holds; a ticket keeps an unlisted status after the dialect turns it off. */
export function statusCategory(value: string): StatusDef['category'] | undefined {
  return ALL_STATUSES.find((s) => s.value === value)?.category;
}

/** Status values a caller may set by hand (everything but closed), for error messages and activity. */
export function settableStatuses(unlisted: boolean): string[] {
  return (unlisted ? ALL_STATUSES : STATUSES).map((s) => s.value).filter((v) => v !== 'closed');
}

export interface PriorityDef {
  value: string;
  label: string;
  /** SLA targets in hours. */
  firstReplyHours: number;
  resolveHours: number;
}

export const PRIORITIES: readonly PriorityDef[] = [
  { value: 'low', label: 'Low', firstReplyHours: 24, resolveHours: 120 },
  { value: 'normal', label: 'Normal', firstReplyHours: 8, resolveHours: 72 },
  { value: 'high', label: 'High', firstReplyHours: 4, resolveHours: 24 },
  { value: 'urgent', label: 'Urgent', firstReplyHours: 1, resolveHours: 8 },
];

/** Priorities of the `unlistedValues` dialect. */
export const UNLISTED_PRIORITIES: readonly PriorityDef[] = [
  { value: 'critical', label: 'Critical', firstReplyHours: 0.5, resolveHours: 4 },
];

const ALL_PRIORITIES: readonly PriorityDef[] = [...PRIORITIES, ...UNLISTED_PRIORITIES];

export const DEFAULT_PRIORITY = 'normal';

export function resolvePriority(input: string, unlisted = false): PriorityDef | undefined {
  const wanted = input.trim().toLowerCase();
  return (unlisted ? ALL_PRIORITIES : PRIORITIES).find((p) => p.value === wanted || p.label.toLowerCase() === wanted);
}

export function priorityValues(unlisted: boolean): string[] {
  return (unlisted ? ALL_PRIORITIES : PRIORITIES).map((p) => p.value);
}

/** SLA targets of a priority a ticket holds (unlisted ones included). */
export function priorityDef(value: string): PriorityDef {
  return resolvePriority(value, true) ?? (PRIORITIES[1] as PriorityDef);
}

/** Authors of automation messages, shown as user references; they are not workspace members. */
export const AUTOMATION_AUTHORS = {
  system: { id: 'usr_automation', name: 'Workspace automation', email: 'automation@workspace.example' },
  bot: { id: 'usr_ai_assistant', name: 'AI assistant', email: 'ai-assistant@workspace.example' },
} as const;

export const AUTO_ACKNOWLEDGEMENT = 'We have received your request and will get back to you shortly.';

export interface FieldDef {
  key: string;
  type: 'text' | 'select' | 'number' | 'boolean';
  options?: readonly string[];
  min?: number;
  max?: number;
}

export const TICKET_FIELDS: readonly FieldDef[] = [
  { key: 'plan', type: 'text' },
  { key: 'region', type: 'select', options: ['na', 'emea', 'apac', 'latam'] },
  { key: 'mrr', type: 'number', min: 0 },
  { key: 'vip', type: 'boolean' },
];

export const DEAL_FIELDS: readonly FieldDef[] = [
  { key: 'source', type: 'select', options: ['inbound', 'outbound', 'referral', 'partner', 'event'] },
  { key: 'probability', type: 'number', min: 0, max: 100 },
];

/**
 * Validates a `fields` object against the definitions; null clears a field. Returns the accepted
 * values (undefined if the input was not an object, after adding an issue).
 */
export function checkFields(defs: readonly FieldDef[], input: unknown, issues: Issues): Record<string, unknown> | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    issues.add('fields', 'must be an object keyed by custom field key');
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const def = defs.find((d) => d.key === key);
    const field = `fields.${key}`;
    if (!def) {
      issues.add(field, `unknown custom field; defined fields are ${defs.map((d) => d.key).join(', ')}`);
      continue;
    }
    if (value === null) {
      out[key] = null;
      continue;
    }
    switch (def.type) {
      case 'text':
        if (typeof value !== 'string') issues.add(field, 'must be a string or null');
        else out[key] = value;
        break;
      case 'select':
        if (typeof value !== 'string' || !def.options?.includes(value))
          issues.add(field, `must be one of ${def.options?.join(', ')} or null`);
        else out[key] = value;
        break;
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value)) issues.add(field, 'must be a number or null');
        else if ((def.min !== undefined && value < def.min) || (def.max !== undefined && value > def.max))
          issues.add(field, `must be between ${def.min ?? '-inf'} and ${def.max ?? 'inf'}`);
        else out[key] = value;
        break;
      case 'boolean':
        if (typeof value !== 'boolean') issues.add(field, 'must be true, false or null');
        else out[key] = value;
        break;
    }
  }
  return out;
}

export const TEAM_NAMES = ['Support', 'Billing', 'Technical', 'Onboarding', 'Escalations'] as const;

// Word lists, packed by hand to read as blocks (Prettier would put one word on a line).
// prettier-ignore
export const TAGS = [
  'billing', 'refund', 'bug', 'feature-request', 'login', 'vip', 'onboarding',
  'integration', 'api', 'mobile', 'feedback', 'outage', 'invoice', 'security',
] as const;

// prettier-ignore
export const FIRST_NAMES = [
  'Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kira', 'Liam',
  'Maya', 'Noah', 'Olga', 'Pablo', 'Quinn', 'Rosa', 'Sami', 'Tara', 'Umar', 'Vera', 'Wes', 'Yuki', 'Zoe',
] as const;

// prettier-ignore
export const LAST_NAMES = [
  'Adams', 'Berg', 'Costa', 'Dubois', 'Evans', 'Fischer', 'Garcia', 'Hansen', 'Ito', 'Jensen', 'Kowalski',
  'Larsen', 'Moreau', 'Nakamura', 'Okafor', 'Patel', 'Quist', 'Rossi', 'Silva', 'Tanaka', 'Ueda', 'Varga',
  'Weber', 'Young', 'Zhang',
] as const;

// prettier-ignore
export const COMPANY_WORDS = [
  'Acme', 'Globex', 'Initech', 'Umbrella', 'Stark', 'Wayne', 'Hooli', 'Vandelay', 'Tyrell', 'Cyberdyne',
  'Soylent', 'Aperture', 'Wonka', 'Gringotts', 'Oceanic', 'Massive', 'Pied', 'Nimbus', 'Vertex', 'Blue',
] as const;

export const COMPANY_SUFFIXES = ['Labs', 'Corp', 'Systems', 'Logistics', 'Health', 'Retail', 'Media', 'Energy'] as const;

// prettier-ignore
export const SUBJECTS = [
  'Cannot log in after password reset', 'Invoice shows the wrong amount', 'Export to CSV times out',
  'Feature request: dark mode', 'Refund for duplicate charge', 'API returns 500 on bulk update',
  'How do I add a teammate?', 'Mobile app crashes on start', 'Webhook deliveries delayed',
  'Change billing email', 'SSO setup question', 'Data import stuck at 90%', 'Upgrade to annual plan',
  'Report numbers do not match', 'Two-factor codes not arriving', 'Cancel my subscription',
] as const;

// prettier-ignore
export const SENTENCES = [
  'Thanks for reaching out.', 'I have attached a screenshot of the problem.', 'This started yesterday afternoon.',
  'Could you take a look as soon as possible?', 'We have reproduced the issue on our side.',
  'A fix is being rolled out today.', 'Can you confirm which browser you are using?',
  'The workaround below should unblock you for now.', 'It works again, thank you!',
  'Customer is on the enterprise plan, handle with care.', 'Escalated to the platform team.',
  'Still seeing the same error this morning.', 'I have refunded the duplicate charge.',
  'Please try clearing the cache and signing in again.', 'Closing the loop on this one.',
] as const;

export const PIPELINE_NAMES = ['Sales', 'Enterprise', 'Partnerships', 'Renewals', 'Expansion', 'Self-serve'] as const;

export const OPEN_STAGE_NAMES = ['Lead', 'Qualified', 'Demo', 'Proposal', 'Negotiation'] as const;

export const CURRENCIES = ['USD', 'USD', 'USD', 'EUR', 'EUR', 'GBP'] as const;
