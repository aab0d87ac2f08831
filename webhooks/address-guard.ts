import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may not point (server-side request forgery): loopback, private, link-local (cloud metadata at
 * 169.254.169.254 and fd00:ec2::254 included), carrier-grade NAT, unspecified, multicast and reserved ranges, in
 * IPv4 and IPv6 (IPv4-mapped IPv6 addresses are checked as the IPv4 they carry).
 */
const REFUSED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  REFUSED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const)
  REFUSED.addSubnet(net, prefix, 'ipv6');

/** `WEBHOOK_ALLOW_PRIVATE_NETWORKS`: addresses and CIDR ranges (`127.0.0.1`, `10.0.0.0/8`, `::1`) let through anyway. */
export function allowList(entries: readonly string[]): BlockList {
  const allowed = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0) throw new Error(`WEBHOOK_ALLOW_PRIVATE_NETWORKS: "${entry}" is not an address or CIDR range`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) allowed.addAddress(address!, type);
    else allowed.addSubnet(address!, Number(bits), type);
  }
  return allowed;
}

/** The address as the family it really is: `::ffff:10.0.0.1` is 10.0.0.1. */
function unmapped(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, type: 'ipv4' };
  return { address, type: isIP(address) === 4 ? 'ipv4' : 'ipv6' };
}

/** Why a resolved address may not be called, or undefined when it may. */
export function refusedAddress(address: string, allowed: BlockList): string | undefined {
  const a = unmapped(address);
  if (allowed.check(a.address, a.type)) return undefined;
  return REFUSED.check(a.address, a.type) ? `${address} is a loopback, private, link-local or reserved address` : undefined;
}

export type UrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

/**
 * Checks a webhook URL where it is registered and again before every delivery (DNS may have changed): https (http only
 * to an allowed address), no credentials, and every address its host resolves to callable.
 */
export async function checkWebhookUrl(
  raw: string,
  allowed: BlockList,
  lookup: (host: string) => Promise<string[]> = async (host) => (await dnsLookup(host, { all: true })).map((a) => a.address),
): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'the scheme must be https' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await lookup(host);
  } catch {
    return { ok: false, reason: `${host} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} does not resolve` };
  for (const address of addresses) {
    const refused = refusedAddress(address, allowed);
    if (refused) return { ok: false, reason: `${refused} (WEBHOOK_ALLOW_PRIVATE_NETWORKS can allow it)` };
  }
  const everyAllowed = addresses.every((a) => allowed.check(unmapped(a).address, unmapped(a).type));
  if (url.protocol === 'http:' && !everyAllowed) return { ok: false, reason: 'the scheme must be https' };
  return { ok: true, url, addresses };
}
