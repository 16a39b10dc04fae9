/** The bundled simulator in its own process, and the few control calls the benchmark needs. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KEY = 'bench-key';
export const root = fileURLToPath(new URL('../..', import.meta.url));
export const cli = join(root, 'bin/wsmirror.js');

export interface SimProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startSim(args: { tickets: number; deals: number; rateLimit?: number }): Promise<SimProcess> {
  const flags = [
    'simulate',
    '--port',
    '0',
    '--api-key',
    KEY,
    '--tickets',
    String(args.tickets),
    '--deals',
    String(args.deals),
    '--control',
    '--seed',
    '1',
  ];
  if (args.rateLimit) flags.push('--rate-limit', String(args.rateLimit));
  // The L workspace holds ~565,000 seeded events in memory.
  const child = spawn(process.execPath, ['--max-old-space-size=4096', cli, ...flags], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+?) /.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The control API's JSON answer; callers assert the shape they asked for. */
export async function control(url: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${url}/_control/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`control ${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

export interface SeenRequests {
  total: number;
  byStatus: Record<string, number>;
  /** Wall time from the first request's start to the last one's. */
  spanMs: number;
  /** Requests to the change log (`/api/v1/events`). */
  events: number;
}

/** API requests the simulator saw since the last clear, then clears the log. */
export async function takeRequests(url: string): Promise<SeenRequests> {
  const { requests } = (await control(url, 'GET', 'requests')) as { requests: Array<{ status: number; startedAt: string; path: string }> };
  await control(url, 'DELETE', 'requests');
  const byStatus: Record<string, number> = {};
  for (const r of requests) byStatus[String(r.status)] = (byStatus[String(r.status)] ?? 0) + 1;
  const first = requests[0] ? Date.parse(requests[0].startedAt) : 0;
  const last = requests.at(-1) ? Date.parse(requests.at(-1)!.startedAt) : 0;
  const events = requests.filter((r) => r.path.startsWith('/api/v1/events')).length;
  return { total: requests.length, byStatus, spanMs: last - first, events };
}

export async function simNow(url: string): Promise<number> {
  return Date.parse(((await control(url, 'GET', 'clock')) as { now: string }).now);
}
