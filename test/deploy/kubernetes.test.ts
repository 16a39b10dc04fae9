import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { KUBERNETES, manifestFiles, readYaml, type Doc } from './read.js';

/** The kinds deploy/kubernetes may hold, each with the model whose schema validates it (offline: the schemas ship in the package). */
const MODELS: Record<string, { validate(doc: Doc): void }> = {
  'apps/v1 Deployment': { validate: (d) => new Deployment(d).validate() },
  'batch/v1 Job': { validate: (d) => new Job(d).validate() },
  'v1 ConfigMap': { validate: (d) => new ConfigMap(d).validate() },
  'v1 Namespace': { validate: (d) => new Namespace(d).validate() },
  'v1 Secret': { validate: (d) => new Secret(d).validate() },
  'v1 Service': { validate: (d) => new Service(d).validate() },
};

const docs: { file: string; doc: Doc }[] = manifestFiles().flatMap((file) =>
  readYaml(join(KUBERNETES, file)).map((doc) => ({ file, doc })),
);
const one = (kind: string, name: string): Doc => {
  const found = docs.filter((d) => d.doc.kind === kind && d.doc.metadata?.name === name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!.doc;
};
const worker = (): Doc => one('Deployment', 'wsmirror-worker');
const migrate = (): Doc => one('Job', 'wsmirror-migrate');
const fleetFile = (): Doc => JSON.parse(one('ConfigMap', 'wsmirror-fleet').data['fleet.json']);

describe('deploy/kubernetes', () => {
  it('holds only manifests that validate against the Kubernetes schemas', () => {
    expect(docs.length).toBeGreaterThanOrEqual(6);
    for (const { file, doc } of docs) {
      const model = MODELS[`${doc.apiVersion} ${doc.kind}`];
      expect(model, `${file}: ${doc.apiVersion} ${doc.kind} has no schema here`).toBeDefined();
      expect(() => model!.validate(doc), `${file}: ${doc.kind} ${doc.metadata?.name}`).not.toThrow();
      expect(doc.metadata.namespace ?? doc.metadata.name, `${file}: namespace`).toBe('wsmirror');
    }
  });

  it('catches a manifest that breaks the schema (the validation is real)', () => {
    const broken = structuredClone(worker());
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => MODELS['apps/v1 Deployment']!.validate(broken)).toThrow(/containerPort must be integer/);
    const noSelector = structuredClone(worker());
    delete noSelector.spec.selector;
    expect(() => MODELS['apps/v1 Deployment']!.validate(noSelector)).toThrow(/selector/);
  });

  it('lists every manifest in kustomization.yaml', () => {
    const [k] = readYaml(join(KUBERNETES, 'kustomization.yaml'));
    expect(k.kind).toBe('Kustomization');
    expect([...k.resources].sort()).toEqual(manifestFiles());
  });

  it('runs the workers as the issue says: fleet worker on the mounted fleet file, probes, requests and limits', () => {
    const spec = worker().spec.template.spec;
    const [c] = spec.containers;
    expect(spec.containers).toHaveLength(1);
    expect(c.args.slice(0, 4)).toEqual(['fleet', 'worker', '--config', '/etc/wsmirror/fleet.json']);
    expect(c.args[c.args.indexOf('--concurrency') + 1]).toMatch(/^\d+$/);
    expect(c.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'http' });
    expect(c.ports).toEqual([expect.objectContaining({ name: 'http', containerPort: fleetFile().worker.http.port })]);
    for (const key of ['cpu', 'memory']) {
      expect(c.resources.requests[key], `requests.${key}`).toBeDefined();
      expect(c.resources.limits.memory, 'limits.memory').toBeDefined();
    }
    // The ceiling: no worker over 400 MB resident; the limit leaves room above the heap cap.
    expect(mebibytes(c.resources.limits.memory)).toBeGreaterThanOrEqual(400);
    expect(spec.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(worker().spec.replicas).toBeGreaterThanOrEqual(2);
  });

  it('mounts the fleet file from the ConfigMap and the keys from the Secret as files the fleet file names', () => {
    const spec = worker().spec.template.spec;
    const mounts = spec.containers[0].volumeMounts as Doc[];
    const volume = (name: string) => spec.volumes.find((v: Doc) => v.name === name);
    const configMount = mounts.find((m) => volume(m.name)?.configMap);
    const keyMount = mounts.find((m) => volume(m.name)?.secret);
    expect(volume(configMount.name).configMap.name).toBe('wsmirror-fleet');
    expect(posix.join(configMount.mountPath, 'fleet.json')).toBe('/etc/wsmirror/fleet.json');
    const keys = one('Secret', volume(keyMount.name).secret.secretName);
    const fleet = fleetFile();
    expect(fleet.workspaces.length).toBeGreaterThan(0);
    for (const ws of fleet.workspaces) {
      expect(ws.apiKeyEnv, `${ws.id}: keys are files`).toBeUndefined();
      expect(posix.dirname(ws.apiKeyFile)).toBe(keyMount.mountPath);
      expect(Object.keys(keys.stringData ?? keys.data)).toContain(posix.basename(ws.apiKeyFile));
      expect(ws).toMatchObject({ id: expect.any(String), baseUrl: expect.stringMatching(/^https?:\/\//), schedule: expect.any(String) });
      expect(ws.maxRequestsPerSecond === 'auto' || ws.maxRequestsPerSecond > 0).toBe(true);
    }
    expect(Object.keys(keys.stringData ?? keys.data).sort()).toEqual(fleet.workspaces.map((w: Doc) => posix.basename(w.apiKeyFile)).sort());
  });

  it('keeps every secret out of the ConfigMap: the database password is PGPASSWORD from a Secret', () => {
    const fleet = fleetFile();
    expect(fleet.database).toMatch(/^postgres(ql)?:\/\/[^:@/]+@/);
    for (const pod of [worker(), migrate()]) {
      const env = pod.spec.template.spec.containers[0].env as Doc[];
      const pg = env.find((e) => e.name === 'PGPASSWORD');
      expect(pg.valueFrom.secretKeyRef.name).toBe('wsmirror-database');
      expect(Object.keys(one('Secret', 'wsmirror-database').stringData)).toContain(pg.valueFrom.secretKeyRef.key);
    }
    // The worker's page must answer the kubelet's probes from outside the pod.
    expect(fleet.worker.http.host).toBe('0.0.0.0');
  });

  it('migrates with fleet apply on the same fleet file, and serves the worker port through a Service', () => {
    const job = migrate().spec.template.spec;
    expect(job.containers[0].args).toEqual(['fleet', 'apply', '--config', '/etc/wsmirror/fleet.json']);
    expect(job.containers[0].image).toBe(worker().spec.template.spec.containers[0].image);
    expect(['OnFailure', 'Never']).toContain(job.restartPolicy);
    expect(job.volumes.find((v: Doc) => v.configMap)?.configMap.name).toBe('wsmirror-fleet');
    const service = one('Service', 'wsmirror-worker');
    expect(service.spec.selector).toEqual(worker().spec.selector.matchLabels);
    expect(worker().spec.template.metadata.labels).toMatchObject(worker().spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([expect.objectContaining({ targetPort: 'http', port: fleetFile().worker.http.port })]);
  });

  it('names no placeholder value outside the Secret, and no real-looking key anywhere', () => {
    for (const { file, doc } of docs) {
      const text = readFileSync(join(KUBERNETES, file), 'utf8');
      if (doc.kind === 'Secret') for (const v of Object.values<string>(doc.stringData)) expect(v).toMatch(/^REPLACE-WITH-/);
      else expect(text, file).not.toMatch(/REPLACE-WITH-/);
    }
  });
});

function mebibytes(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`memory quantity ${q} is not in Mi or Gi`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}
