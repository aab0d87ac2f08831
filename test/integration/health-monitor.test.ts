import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { createHealthMonitor } from '../../tools/health.ts';

let status = 200;
let probes = 0;
const server = createServer((_req, res) => {
  probes++;
  res.writeHead(status).end();
});
let base = '';
before(async () => {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const provider = (intervalS: number) => ({
  name: 'Geo',
  id: 'geo',
  noApiKey: true,
  health: { url: '${HEALTH_BASE}/health', intervalS, timeoutS: 2 },
});

it('keeps the last probe for interval_s, then probes again; concurrent checks share one probe', async () => {
  let clock = 0;
  const monitor = createHealthMonitor({ env: { HEALTH_BASE: base }, now: () => clock });
  probes = 0;
  status = 503;
  assert.deepEqual(await Promise.all([monitor.passing(provider(60)), monitor.passing(provider(60))]), [false, false]);
  assert.equal(probes, 1);
  status = 200;
  clock = 59_000;
  assert.equal(await monitor.passing(provider(60)), false, 'still the last result');
  clock = 60_000;
  assert.equal(await monitor.passing(provider(60)), true, 'probed again once stale');
  assert.equal(probes, 2);
});

it('passes a provider without a probe, and fails one whose probe URL cannot be filled or reached', async () => {
  const monitor = createHealthMonitor({ env: {} });
  assert.equal(await monitor.passing({ name: 'X', id: 'x', noApiKey: false }), true);
  assert.equal(await monitor.passing(provider(0)), false, 'HEALTH_BASE unset');
  const unreachable = createHealthMonitor({ env: { HEALTH_BASE: 'http://127.0.0.1:1' } });
  assert.equal(await unreachable.passing(provider(0)), false);
});
