import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';

export const START = new Date('2024-06-01T12:00:00.000Z');

/**
 * A JSON body or record as the simulator sends it. These tests check the wire shape itself, so it
 * stays untyped here rather than cast to the shape under test; each expect() is the check.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one deliberate `any` of these tests, named once
export type Wire = any;

export interface Client {
  sim: Simulator;
  get(path: string, key?: string | null): Promise<{ status: number; body: Wire; headers: Headers }>;
  send(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: Wire; headers: Headers }>;
  /** Every page of a list, calling `between` after each page. Any list end (null, "" or no nextCursor) ends it. */
  pageAll(path: string, field: string, between?: () => void): Promise<Wire[]>;
}

export async function start(options: SimulatorOptions = {}): Promise<Client> {
  const sim = await startSimulator({ startTime: START, ...options });
  const request = async (method: string, path: string, body: unknown, key: string | null) => {
    const headers: Record<string, string> = {};
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
  };
  return {
    sim,
    get: (path, key = 'test-key') => request('GET', path, undefined, key),
    send: (method, path, body, key = 'test-key') => request(method, path, body, key),
    async pageAll(path, field, between) {
      const out: Wire[] = [];
      let cursor: string | null | undefined = null;
      for (let guard = 0; guard < 10_000; guard++) {
        const sep = path.includes('?') ? '&' : '?';
        const r = await request('GET', cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path, undefined, 'test-key');
        if (r.status !== 200) throw new Error(`page failed ${r.status} ${JSON.stringify(r.body)}`);
        out.push(...r.body[field]);
        cursor = r.body.nextCursor;
        between?.();
        if (cursor === null || cursor === undefined || cursor === '') return out;
      }
      throw new Error('too many pages');
    },
  };
}
