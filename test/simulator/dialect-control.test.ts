import { afterEach, describe, expect, it } from 'vitest';
import { DIALECT_ENV, SIMULATOR_DIALECTS, startSimulator } from '../../src/simulator/index.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { start, START, type Wire } from './helpers.js';

const FULL = {
  changeEvents: 'updated',
  opaquePayload: 'summary',
  changeFieldNames: 'api',
  changeValues: 'refs',
  timestamps: 's-offset',
  listEnd: 'absent',
  extraFields: true,
  unlistedValues: true,
  teamShape: 'rich',
  listPaging: 'offset',
};

describe('setting the dialect', () => {
  afterEach(() => {
    delete process.env[DIALECT_ENV];
  });

  it('control.setDialect merges, takes effect on the next answer and refuses unknown options and values', async () => {
    const c = await start({ tickets: 20, deals: 5, seed: 1 });
    try {
      expect(c.sim.control.dialect()).toMatchObject({ changeEvents: 'dedicated', timestamps: 'ms-z', listEnd: 'null', extraFields: false });
      const id = (c.sim.control.truth().tickets as Wire[])[0].id;
      const before = (await c.get(`/api/v1/tickets/${id}`)).body.ticket;
      expect(before.updatedAt).toMatch(/\.\d{3}Z$/);
      expect(c.sim.control.setDialect({ timestamps: 'ms-offset', teamShape: 'rich' })).toMatchObject({
        timestamps: 'ms-offset',
        teamShape: 'rich',
        changeEvents: 'dedicated',
      });
      // The cached body of the same record version is written again in the new spelling.
      const after = (await c.get(`/api/v1/tickets/${id}`)).body.ticket;
      expect(after.updatedAt).toBe(before.updatedAt.replace('Z', '+00:00'));
      expect((await c.get('/api/v1/events?limit=1')).body.events[0].occurredAt).toMatch(/\+00:00$/);
      // A bad patch changes nothing.
      expect(() => c.sim.control.setDialect({ timestamps: 'seconds' as 's-z', listEnd: 'empty' })).toThrow(
        /dialect\.timestamps must be one of ms-z, s-z, ms-offset, s-offset/,
      );
      expect(() => c.sim.control.setDialect({ changeEvent: 'updated' } as never)).toThrow(/no option "changeEvent"/);
      expect(() => c.sim.control.setDialect({ extraFields: 'yes' as never })).toThrow(/extraFields must be true or false/);
      expect(c.sim.control.dialect().listEnd).toBe('null');
      // Later writes log in the new form; the log already written stays as it was.
      c.sim.control.setDialect({ changeEvents: 'updated' });
      const t = (c.sim.control.truth().tickets as Wire[]).find((x) => x.status === 'open');
      await c.send('PATCH', `/api/v1/tickets/${t.id}`, { status: 'pending' });
      expect((await c.get(`/api/v1/events?entityId=${t.id}&limit=1`)).body.events[0]).toMatchObject({
        type: 'ticket.updated',
        payload: { status: { from: 'open', to: 'pending' } },
      });
      expect((c.sim.control.truth().events as Wire[]).some((e) => e.type === 'ticket.status_changed')).toBe(true);
      await expect(startSimulator({ dialect: { listEnd: 'none' as 'null' } })).rejects.toThrow(
        /dialect\.listEnd must be one of null, empty, absent/,
      );
    } finally {
      await c.sim.close();
    }
  });

  it('over HTTP: GET and POST /_control/dialect; a bad value is a 400 that names it', async () => {
    const c = await start({ tickets: 10, deals: 5, control: true });
    try {
      const get = async () => (await fetch(`${c.sim.url}/_control/dialect`)).json() as Promise<Wire>;
      expect((await get()).dialect.listEnd).toBe('null');
      const post = (body: unknown) => fetch(`${c.sim.url}/_control/dialect`, { method: 'POST', body: JSON.stringify(body) });
      const ok = await post({ listEnd: 'empty', changeValues: 'refs' });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Wire).dialect).toMatchObject({ listEnd: 'empty', changeValues: 'refs' });
      expect((await c.get('/api/v1/deals?limit=100')).body.nextCursor).toBe('');
      const bad = await post({ teamShape: 'fancy' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as Wire).error.message).toMatch(/dialect\.teamShape must be one of plain, rich, got "fancy"/);
      expect((await get()).dialect).toEqual({ ...c.sim.control.dialect(), teamShape: 'plain' });
    } finally {
      await c.sim.close();
    }
  });

  it(`${DIALECT_ENV} names the preset used when no dialect is given`, async () => {
    process.env[DIALECT_ENV] = 'list-end-absent';
    const fromEnv = await startSimulator({ tickets: 5, deals: 2 });
    const given = await startSimulator({ tickets: 5, deals: 2, dialect: {} });
    try {
      expect(fromEnv.control.dialect().listEnd).toBe('absent');
      expect(given.control.dialect().listEnd).toBe('null');
      process.env[DIALECT_ENV] = 'nope';
      await expect(startSimulator({ tickets: 5 })).rejects.toThrow(
        /WSMIRROR_SIMULATOR_DIALECT: no simulator dialect is called "nope"; presets are default, /,
      );
    } finally {
      await Promise.all([fromEnv.close(), given.close()]);
    }
  });
});

describe('wsmirror simulate dialect flags', () => {
  it('serves the dialect the flags ask for', async () => {
    const flags = [
      ...['--change-events', 'updated', '--change-field-names', 'api', '--change-values', 'refs', '--timestamps', 's-offset'],
      ...['--list-end', 'absent', '--extra-fields', '--unlisted-values', '--team-shape', 'rich', '--list-paging', 'offset'],
    ];
    const sim = spawnCli(['simulate', '--port', '0', '--tickets', '5', '--deals', '2', '--control', ...flags], {});
    try {
      let out = '';
      sim.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await waitForOutput(sim, /listening on/);
      const base = /listening on (http:\/\/\S+?) /.exec(out)![1]!;
      expect(((await (await fetch(`${base}/_control/dialect`)).json()) as Wire).dialect).toEqual(FULL);
      const page = (await (
        await fetch(`${base}/api/v1/events?limit=100`, { headers: { authorization: 'Bearer test-key' } })
      ).json()) as Wire;
      expect(page.events[0].occurredAt).toMatch(/:\d\d\+00:00$/);
      expect(page).toHaveProperty('meta');
    } finally {
      sim.kill('SIGTERM');
      expect((await sim.result).code).toBe(0);
    }
  });

  it('a preset, overridden by a flag', async () => {
    const sim = spawnCli(
      ['simulate', '--port', '0', '--tickets', '5', '--deals', '2', '--control', '--dialect', 'extras', '--team-shape', 'plain'],
      {},
    );
    try {
      let out = '';
      sim.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await waitForOutput(sim, /listening on/);
      const base = /listening on (http:\/\/\S+?) /.exec(out)![1]!;
      expect(((await (await fetch(`${base}/_control/dialect`)).json()) as Wire).dialect).toMatchObject({
        extraFields: true,
        unlistedValues: true,
        teamShape: 'plain',
      });
    } finally {
      sim.kill('SIGTERM');
      expect((await sim.result).code).toBe(0);
    }
  });

  it.each([
    [['--change-events', 'all'], /--change-events must be one of dedicated, updated, opaque; got "all"/],
    [['--change-field-names', 'camel'], /--change-field-names must be one of apiId, api, snake; got "camel"/],
    [['--list-end', 'none'], /--list-end must be one of null, empty, absent; got "none"/],
    [['--dialect', 'strange'], /--dialect must be one of default, updated-ids, .*; got "strange"/],
  ])('refuses %j with exit 2 naming the flag', async (args, message) => {
    const r = await runCli(['simulate', '--port', '0', ...args], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it(`refuses an unknown ${DIALECT_ENV} with exit 2 naming it`, async () => {
    const r = await runCli(['simulate', '--port', '0'], { [DIALECT_ENV]: 'strange' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/WSMIRROR_SIMULATOR_DIALECT must be one of default, /);
  });
});

describe('presets', () => {
  it('are complete, valid dialects with distinct names', async () => {
    expect(Object.keys(SIMULATOR_DIALECTS)).toEqual(
      expect.arrayContaining([
        'default',
        'updated-ids',
        'updated-refs',
        'updated-snake',
        'opaque',
        'seconds-offset',
        'list-end-empty',
        'list-end-absent',
        'extras',
      ]),
    );
    for (const [name, preset] of Object.entries(SIMULATOR_DIALECTS)) {
      const sim = await startSimulator({ tickets: 3, deals: 1, startTime: START, dialect: preset });
      try {
        expect(sim.control.dialect(), name).toMatchObject(preset);
      } finally {
        await sim.close();
      }
    }
    expect(SIMULATOR_DIALECTS.extras).toEqual({ extraFields: true, unlistedValues: true, teamShape: 'rich' });
  });
});
