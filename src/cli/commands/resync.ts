import { unsafePathSegment } from '../../api/index.js';
import type { RecordType } from '../../entities/index.js';
import { backfillSinceLine, resyncLine, type BackfillSinceResult, type RecordRef, type ResyncResult } from '../../sync/index.js';
import { EXIT, ExitError } from '../../util/errors.js';
import { readInstant } from '../../util/time.js';
import type { SecretRedactor } from '../../util/redact.js';
import type { GlobalFlags } from '../../session/index.js';
import { usageError } from '../session.js';
import { DEFAULT_WAIT_SECONDS, runWriterRequest } from '../writer-request.js';

export interface ResyncOptions {
  ticket?: string[];
  deal?: string[];
  wait?: string;
  json?: boolean;
}

/** Commander's collector for a repeatable option taking comma lists: `--ticket a --ticket b,c`. */
export function collectIds(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((v) => v.trim())];
}

/**
 * `wsmirror resync --ticket <id> --deal <id>`: re-reads these records now and prints what became
 * of each (docs/operations.md, "Repairing one record or a period"). Exit 2 for a bad or unknown id.
 */
export async function resyncCommand(flags: GlobalFlags, opts: ResyncOptions, redactor: SecretRedactor): Promise<void> {
  const records = [...refs('ticket', '--ticket', opts.ticket), ...refs('deal', '--deal', opts.deal)];
  if (records.length === 0)
    throw usageError('Name the records to read again: `wsmirror resync --ticket <id>` or `--deal <id>` (repeatable, or comma lists).');
  const waitSeconds = waitOption(opts.wait);
  const result = (await runWriterRequest(flags, redactor, 'resync', { records }, { waitSeconds })) as ResyncResult | null;
  if (!result) return;
  if (opts.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else for (const r of result.records) process.stdout.write(`${resyncLine(r)}\n`);
  const unknown = result.records.filter((r) => r.outcome === 'not-found');
  if (unknown.length > 0) {
    throw new ExitError(
      EXIT.usage,
      `No such record: neither the workspace nor the mirror knows ${unknown.map((r) => `${r.entityType} ${r.entityId}`).join(', ')}; check the id (the mirror's ids are in its tickets and deals tables).`,
      { code: 'UNKNOWN_RECORD' },
    );
  }
  const pending = result.records.filter((r) => r.outcome === 'pending');
  if (pending.length > 0) {
    throw new ExitError(
      EXIT.upstreamUnavailable,
      `The workspace did not answer the read of ${pending.map((r) => `${r.entityType} ${r.entityId}`).join(', ')}; it stays marked and the next sync reads it again, or run this command again later.`,
      { code: 'UPSTREAM_UNAVAILABLE' },
    );
  }
}

/**
 * `wsmirror backfill --since <date>`: re-lists the records updated since the date and re-reads
 * what differs from the mirror, keeping the watermark and the history.
 */
export async function backfillSinceCommand(
  flags: GlobalFlags,
  opts: { since: string; wait?: string; json?: boolean },
  redactor: SecretRedactor,
): Promise<void> {
  const read = readInstant(opts.since);
  if (!read.ok) {
    throw usageError(
      `--since ${JSON.stringify(opts.since)} is not a date (${read.why}): give an ISO date (2026-03-01, midnight UTC) or an instant with a zone (2026-03-01T12:00:00Z).`,
    );
  }
  const since = new Date(read.ms).toISOString();
  const waitSeconds = waitOption(opts.wait);
  const result = (await runWriterRequest(flags, redactor, 'backfill-since', { since }, { waitSeconds })) as BackfillSinceResult | null;
  if (!result) return;
  process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${backfillSinceLine(result)}\n`);
}

function refs(entityType: RecordType, flag: string, ids: readonly string[] | undefined): RecordRef[] {
  const out = new Map<string, RecordRef>();
  for (const id of ids ?? []) {
    const why = unsafePathSegment(id);
    if (why !== null) throw usageError(`${flag} ${JSON.stringify(id)} is not a record id: ${why}.`);
    out.set(id, { entityType, entityId: id });
  }
  return [...out.values()];
}

/** `--wait <seconds>` of a command queued through the writer's inbox. */
export function waitOption(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WAIT_SECONDS;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n))
    throw usageError(`--wait ${JSON.stringify(text)} must be a whole number of seconds (0: queue and return).`);
  return n;
}
