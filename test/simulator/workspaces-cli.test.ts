import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

async function served(args: string[], check: (url: string) => Promise<void>): Promise<string> {
  const sim = spawnCli(['simulate', '--port', '0', '--tickets', '4', '--deals', '2', ...args], {});
  try {
    let out = '';
    sim.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitForOutput(sim, /listening on/);
    await check(/listening on (http:\/\/\S+?) /.exec(out)![1]!);
    return out;
  } finally {
    sim.kill('SIGTERM');
    expect((await sim.result).code).toBe(0);
  }
}

const get = (url: string, key: string) => fetch(url, { headers: { authorization: `Bearer ${key}` } });

describe('wsmirror simulate --workspaces', () => {
  it('serves a count of workspaces as ws1..wsN, each with its own key', async () => {
    const out = await served(['--workspaces', '3', '--control'], async (url) => {
      expect((await get(`${url}/w/ws3/api/v1/pipelines`, 'key-ws3')).status).toBe(200);
      expect((await get(`${url}/w/ws2/api/v1/pipelines`, 'key-ws3')).status).toBe(401);
      const list = (await (await fetch(`${url}/_control/workspaces`)).json()) as { workspaces: { id: string }[] };
      expect(list.workspaces.map((w) => w.id)).toEqual(['ws1', 'ws2', 'ws3']);
    });
    expect(out).toMatch(/with 3 workspace\(s\) \(ws1, ws2, ws3\), each under http:\S+\/w\/<id>/);
  });

  it('serves the workspaces of a JSON file, each in its own dialect', async () => {
    const file = join(tmp.dir, 'workspaces.json');
    writeFileSync(
      file,
      JSON.stringify({
        workspaces: [
          { id: 'acme', apiKey: 'acme-secret', dialect: 'seconds-offset' },
          { id: 'globex', apiKey: 'globex-secret', tickets: 7, dialect: { listEnd: 'absent' } },
        ],
      }),
    );
    const out = await served(['--workspaces', file], async (url) => {
      const acme = (await (await get(`${url}/w/acme/api/v1/tickets?limit=1`, 'acme-secret')).json()) as {
        tickets: { updatedAt: string }[];
      };
      expect(acme.tickets[0]!.updatedAt).toMatch(/:\d\d\+00:00$/);
      const globex = (await (await get(`${url}/w/globex/api/v1/tickets?limit=100`, 'globex-secret')).json()) as object;
      expect((globex as { tickets: unknown[] }).tickets).toHaveLength(7);
      expect(globex).not.toHaveProperty('nextCursor');
      expect((await get(`${url}/w/globex/api/v1/tickets`, 'acme-secret')).status).toBe(401);
    });
    expect(out).not.toContain('secret');
  });

  it('refuses a file that names an unknown key or a bad value, naming it', async () => {
    const file = join(tmp.dir, 'bad.json');
    writeFileSync(file, JSON.stringify([{ id: 'a', tickts: 5 }]));
    const unknown = await runCli(['simulate', '--port', '0', '--workspaces', file], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/workspaces\[0\] has an unknown key "tickts"/);
    writeFileSync(file, JSON.stringify([{ id: 'a', tickets: -1 }]));
    const negative = await runCli(['simulate', '--port', '0', '--workspaces', file], {});
    expect(negative.code).toBe(2);
    expect(negative.stderr).toMatch(/tickets must be a whole number >= 0/);
  });
});
