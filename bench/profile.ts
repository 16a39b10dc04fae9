/**
 * Where a job's own CPU goes: a V8 CPU profile (`node --cpu-prof`) reduced to self time per
 * group of code (bench/README.md, "CPU profile summary"). Self time is charged to the function
 * running when V8 sampled, so a group's share is what that code itself costs, not what it calls.
 */
import { readFileSync } from 'node:fs';

/** The part of a `.cpuprofile` this reads. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

export const PROFILE_GROUPS = [
  'validation',
  'HTTP client',
  'sync',
  'store',
  'SQLite driver',
  'pg driver',
  'query builder',
  'JSON',
  'GC',
  'idle',
  'other',
] as const;
export type ProfileGroup = (typeof PROFILE_GROUPS)[number];

export interface ProfileSummary {
  /** Sampled ms, idle excluded. */
  busyMs: number;
  /** Share of busyMs per group (idle: of the whole profile), 0..1, rounded to 3 places. */
  groups: Partial<Record<ProfileGroup, number>>;
  /** The heaviest functions by self time: `name (file:line)`, group, share of busyMs. */
  top: Array<{ fn: string; group: ProfileGroup; share: number }>;
}

/**
 * A frame's group by its file, then by its name for V8's own frames. The native calls of a driver
 * (better-sqlite3's `run`, pg's socket writes) show as the JavaScript function that made them.
 */
export function groupOf(url: string, name: string): ProfileGroup {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)') return 'idle';
  // Kysely's drivers are where the native statement calls are made: their self time is the driver's.
  if (/\/node_modules\/kysely\/.*\/sqlite-driver\./.test(url)) return 'SQLite driver';
  if (/\/node_modules\/kysely\/.*\/postgres-driver\./.test(url)) return 'pg driver';
  // undici writes request heads as latin1 strings and parses answers in llhttp (WebAssembly).
  if ((name === 'writeLatin1String' && url === '') || url.startsWith('wasm://')) return 'HTTP client';
  if (/\/node_modules\/zod\//.test(url) || /\/src\/api\/(schemas|validate|json-bounds|path-ids)\.|\/src\/util\/time\./.test(url))
    return 'validation';
  if (
    /\/node_modules\/(undici|p-retry|is-network-error)\//.test(url) ||
    /\/src\/api\/|\/src\/util\/signals\./.test(url) ||
    /^node:(net|stream|events|internal\/(streams|stream_base|net|timers|event_target|abort_controller))/.test(url)
  )
    return 'HTTP client';
  if (/\/node_modules\/better-sqlite3\//.test(url)) return 'SQLite driver';
  if (/\/node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+|pg-copy-streams)\//.test(url)) return 'pg driver';
  if (/\/node_modules\/kysely\//.test(url)) return 'query builder';
  if (/\/src\/store\//.test(url)) return 'store';
  if (/\/src\/sync\//.test(url)) return 'sync';
  return 'other';
}

export function summarizeProfile(file: string, topN = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // A native frame (a driver's statement call, a socket write), and Node's own stream and socket
  // code, belong to the code that called them: a socket write is undici's for a request and pg's
  // for a statement, which only the first frame outside Node itself tells apart.
  const ownerUrl = (id: number, own: string): string => {
    for (let p = parent.get(id); p !== undefined; p = parent.get(p)) {
      const url = byId.get(p)!.url;
      if (url !== '' && !url.startsWith('node:')) return url;
    }
    return own;
  };
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const groups = new Map<ProfileGroup, number>();
  const fns = new Map<string, { group: ProfileGroup; us: number }>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!;
    const native = f.url === '' && !f.functionName.startsWith('(');
    const json = native && (f.functionName === 'parse' || f.functionName === 'stringify');
    const inNode = native || f.url.startsWith('node:');
    const group = json ? 'JSON' : groupOf(inNode ? ownerUrl(id, f.url) : f.url, f.functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
    total += us;
    if (group === 'idle') continue;
    const where = f.url === '' ? 'native' : `${f.url.replace(/^.*\/(node_modules\/|dist\/)/, '')}:${f.lineNumber + 1}`;
    const key = `${f.functionName || '(anonymous)'} (${where})`;
    const entry = fns.get(key) ?? { group, us: 0 };
    entry.us += us;
    fns.set(key, entry);
  }
  const idle = groups.get('idle') ?? 0;
  const busy = total - idle;
  const share = (us: number, of: number) => Number((us / Math.max(1, of)).toFixed(3));
  const out: ProfileSummary['groups'] = {};
  for (const g of PROFILE_GROUPS) {
    const us = groups.get(g);
    if (us !== undefined) out[g] = g === 'idle' ? share(us, total) : share(us, busy);
  }
  const top = [...fns.entries()]
    .sort((a, b) => b[1].us - a[1].us)
    .slice(0, topN)
    .map(([fn, { group, us }]) => ({ fn, group, share: share(us, busy) }));
  return { busyMs: Math.round(busy / 1000), groups: out, top };
}

/** `node dist/bench/profile.js FILE.cpuprofile`: the summary, as text. */
export function formatProfile(s: ProfileSummary): string {
  const lines = [`busy ${s.busyMs} ms (idle ${((s.groups.idle ?? 0) * 100).toFixed(1)} % of the profile)`];
  for (const g of PROFILE_GROUPS) {
    if (g === 'idle' || s.groups[g] === undefined) continue;
    lines.push(`  ${g.padEnd(14)} ${(s.groups[g] * 100).toFixed(1).padStart(5)} %`);
  }
  lines.push('  top self time:');
  for (const t of s.top) lines.push(`  ${(t.share * 100).toFixed(1).padStart(5)} %  ${t.group.padEnd(14)} ${t.fn}`);
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('/profile.js') && process.argv[2]) console.log(formatProfile(summarizeProfile(process.argv[2])));
