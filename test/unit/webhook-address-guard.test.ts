import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowList, checkWebhookUrl } from '../../webhooks/address-guard.ts';

const none = allowList([]);
const resolvesTo = (addresses: string[]) => async () => addresses;

test('webhook URLs that reach loopback, private, link-local or metadata addresses are refused', async () => {
  for (const host of [
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '[::1]',
    '[fd00:ec2::254]',
    '[fe80::1]',
    '[::ffff:127.0.0.1]',
  ]) {
    const check = await checkWebhookUrl(`https://${host}/hook`, none);
    assert.equal(check.ok, false, host);
    assert.match(check.ok ? '' : check.reason, /loopback, private, link-local or reserved/, host);
  }
  const rebound = await checkWebhookUrl('https://hooks.example.com/x', none, resolvesTo(['203.0.113.9', '10.0.0.5']));
  assert.equal(rebound.ok, false, 'one private address among the resolved ones is enough to refuse');
});

test('a public https URL passes; http, credentials and what does not resolve do not', async () => {
  const ok = await checkWebhookUrl('https://hooks.example.com/x', none, resolvesTo(['93.184.216.34']));
  assert.equal(ok.ok, true);
  assert.deepEqual(ok.ok ? ok.addresses : [], ['93.184.216.34']);
  const plain = await checkWebhookUrl('http://hooks.example.com/x', none, resolvesTo(['93.184.216.34']));
  assert.deepEqual(plain, { ok: false, reason: 'the scheme must be https' });
  assert.equal((await checkWebhookUrl('https://u:p@hooks.example.com/x', none, resolvesTo(['93.184.216.34']))).ok, false);
  assert.equal((await checkWebhookUrl('ftp://hooks.example.com/x', none)).ok, false);
  assert.equal((await checkWebhookUrl('not a url', none)).ok, false);
  const unresolvable = await checkWebhookUrl('https://nowhere.invalid/x', none, async () => {
    throw new Error('ENOTFOUND');
  });
  assert.deepEqual(unresolvable, { ok: false, reason: 'nowhere.invalid does not resolve' });
});

test('WEBHOOK_ALLOW_PRIVATE_NETWORKS lets listed addresses and ranges through, http included', async () => {
  const allowed = allowList(['127.0.0.1', '10.0.0.0/8']);
  assert.equal((await checkWebhookUrl('http://127.0.0.1:8080/hook', allowed)).ok, true);
  assert.equal((await checkWebhookUrl('https://10.9.8.7/hook', allowed)).ok, true);
  assert.equal((await checkWebhookUrl('https://192.168.0.1/hook', allowed)).ok, false, 'what is not listed stays refused');
  assert.throws(() => allowList(['localhost']), /not an address or CIDR range/);
});
