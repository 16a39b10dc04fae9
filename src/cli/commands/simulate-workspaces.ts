import { readFileSync } from 'node:fs';
import { dialectPreset, type WorkspaceOptions } from '../../simulator/index.js';
import { usageError } from '../session.js';

/** The keys a workspace of a `--workspaces` file may set (docs/simulator.md, "Many workspaces"). */
const KEYS = [
  'id',
  'apiKey',
  'apiKeys',
  'seed',
  'tickets',
  'deals',
  'pipelines',
  'members',
  'activity',
  'dialect',
  'faults',
  'startTime',
  'realTime',
  'autoAssignOnReply',
  'autoCloseSolvedAfterMs',
] as const;

/**
 * The workspaces `--workspaces` asks for: a count N gives `ws1` .. `wsN`; anything else names a
 * JSON file, `{ "workspaces": [{ "id": ..., ...options }] }` (or the bare array). A file's
 * `dialect` may name a preset; `startTime` is an ISO timestamp. What the file leaves out comes
 * from the other flags. The values themselves are checked by the simulator when it starts.
 */
export function workspacesFromFlag(value: string): WorkspaceOptions[] {
  if (/^\d+$/.test(value)) {
    const n = Number(value);
    if (n < 1 || n > 100_000) throw usageError(`--workspaces must be a count from 1 to 100000 or a JSON file; got "${value}".`);
    return Array.from({ length: n }, (_, i) => ({ id: `ws${i + 1}` }));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(value, 'utf8'));
  } catch (err) {
    throw usageError(`--workspaces ${value}: cannot read it as JSON (${err instanceof Error ? err.message : String(err)}).`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { workspaces?: unknown } | null)?.workspaces;
  if (!Array.isArray(list) || list.length === 0)
    throw usageError(`--workspaces ${value}: expected {"workspaces": [{"id": "...", ...}, ...]} with at least one workspace.`);
  return list.map((entry, i) => workspaceEntry(value, entry, i));
}

function workspaceEntry(file: string, entry: unknown, i: number): WorkspaceOptions {
  const where = `--workspaces ${file}: workspaces[${i}]`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw usageError(`${where} must be an object with an "id".`);
  const raw = { ...(entry as Record<string, unknown>) };
  for (const key of Object.keys(raw))
    if (!(KEYS as readonly string[]).includes(key))
      throw usageError(`${where} has an unknown key "${key}"; known keys are ${KEYS.join(', ')}.`);
  if (typeof raw.id !== 'string') throw usageError(`${where}.id must be a string.`);
  if (typeof raw.dialect === 'string') {
    try {
      raw.dialect = dialectPreset(raw.dialect);
    } catch (err) {
      throw usageError(`${where}.dialect: ${(err as Error).message}, or an object of options.`);
    }
  }
  if (raw.startTime !== undefined) {
    if (typeof raw.startTime !== 'string' || Number.isNaN(Date.parse(raw.startTime)))
      throw usageError(`${where}.startTime must be an ISO timestamp.`);
    raw.startTime = new Date(raw.startTime);
  }
  return raw as unknown as WorkspaceOptions;
}
