/**
 * The example Kubernetes manifests (examples/kubernetes/a2a-discovery.yaml) parse, and hold
 * together: a Deployment of three replicas whose configuration validates (a PostgreSQL store, its
 * password from the Secret), the RBAC the Kubernetes source needs in its namespace, bound to the
 * pods' service account, and a Service that selects the pods; a pod is given time to drain (a
 * `preStop` pause, then a grace period longer than the pause, `server.drainTimeoutMs` and the close bound).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../packages/core/src/config/index.js';

interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

test('the example Kubernetes manifests parse and hold together', async () => {
  const text = await readFile(new URL('../../examples/kubernetes/a2a-discovery.yaml', import.meta.url), 'utf8');
  const parsed = parseAllDocuments(text);
  assert.ok(Array.isArray(parsed), 'a stream of documents');
  for (const d of parsed) assert.deepEqual(d.errors, [], 'no YAML error');
  const docs = parsed.map((d) => d.toJS() as Doc);
  const one = <T>(kind: string) => {
    const found = docs.filter((d) => d.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return found[0] as unknown as T & Doc;
  };
  assert.deepEqual(docs.map((d) => d.kind).sort(), ['ConfigMap', 'Deployment', 'Role', 'RoleBinding', 'Secret', 'Service', 'ServiceAccount']);
  assert.equal(new Set(docs.map((d) => d.metadata.namespace)).size, 1, 'one namespace');

  type Container = {
    args: string[];
    env: Array<{ name: string; valueFrom: { secretKeyRef: { name: string; key: string } } }>;
    readinessProbe: { httpGet: { path: string } };
    lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  };
  const deployment = one<{
    spec: {
      replicas: number;
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> }; spec: { serviceAccountName: string; terminationGracePeriodSeconds?: number; containers: Container[]; volumes: Array<{ configMap: { name: string } }> } };
    };
  }>('Deployment');
  assert.equal(deployment.spec.replicas, 3);
  assert.deepEqual(deployment.spec.template.metadata.labels, deployment.spec.selector.matchLabels);
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0]!;
  assert.deepEqual(container.args.slice(0, 1), ['serve']);
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');

  // The configuration validates, and names the environment variables the Secret provides.
  const configMap = one<{ data: Record<string, string> }>('ConfigMap');
  assert.equal(pod.volumes[0]!.configMap.name, configMap.metadata.name);
  const config = parseConfig(configMap.data['discovery.yaml']!, { file: '/etc/a2a/discovery.yaml' });
  assert.match(config.store, /^postgres:\/\//);
  assert.equal(config.replica.leaderRetryMs, 2_000);
  // Draining: a preStop pause so the endpoints drop the pod first, and a grace period the drain fits in
  // (the pause, server.drainTimeoutMs, then the service's 5 s close bound) before the kubelet's SIGKILL.
  const pause = container.lifecycle?.preStop?.sleep?.seconds;
  assert.ok(pause !== undefined && pause > 0 && pause <= 15, 'a short preStop sleep');
  assert.ok(config.server.drainTimeoutMs > 0);
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  assert.ok(grace > pause + config.server.drainTimeoutMs / 1000 + 5, `terminationGracePeriodSeconds (${grace}) leaves room for the preStop pause and the drain`);
  const secret = one<{ stringData: Record<string, string> }>('Secret');
  const env = new Map(container.env.map((e) => [e.name, e.valueFrom.secretKeyRef]));
  for (const name of [config.storePasswordEnv!, config.server.tokenEnv!]) {
    const ref = env.get(name);
    assert.ok(ref, `${name} is set`);
    assert.equal(ref.name, secret.metadata.name);
    assert.ok(ref.key in secret.stringData, `${ref.key} is in the Secret`);
  }

  // RBAC: list and watch Services in the source's namespace, bound to the pods' service account.
  const role = one<{ rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> }>('Role');
  assert.equal(role.metadata.namespace, config.sources.kubernetes?.namespace);
  assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] }]);
  const binding = one<{ subjects: Array<{ kind: string; name: string }>; roleRef: { kind: string; name: string } }>('RoleBinding');
  assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name });
  assert.equal(binding.subjects[0]!.name, pod.serviceAccountName);
  assert.equal(one('ServiceAccount').metadata.name, pod.serviceAccountName);

  const service = one<{ spec: { selector: Record<string, string> } }>('Service');
  assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
});
