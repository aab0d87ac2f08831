const REDACTED = '[address]';

// Order matters: whole URLs first, then bracketed and bare IPv6, IPv4, host:port, and the names DNS could not find.
const PATTERNS: Array<[RegExp, string]> = [
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>()]+/gi, REDACTED],
  [/\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d{1,5})?/gi, REDACTED],
  [/(?<![\w:.])[0-9a-f]{0,4}(?::[0-9a-f]{0,4})*::[0-9a-f:]*(?:\.\d{1,3}){0,3}/gi, REDACTED],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, REDACTED],
  [/\b(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+):\d{1,5}\b/gi, REDACTED],
  [/\b(getaddrinfo (?:ENOTFOUND|EAI_AGAIN)) \S+/g, `$1 ${REDACTED}`],
];

/** `text` with network addresses (URLs, IP addresses, host:port) replaced: messages shown to clients must not map the infrastructure. */
export function scrubAddresses(text: string): string {
  let out = text;
  for (const [re, by] of PATTERNS) out = out.replace(re, by);
  return out;
}
