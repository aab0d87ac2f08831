/**
 * A UUID-shaped id derived from `key` alone (four 32-bit FNV-1a hashes with different seeds; version nibble 8, the
 * RFC 9562 custom version). For ids workflow code must choose the same way on every replay, whatever else drew on the
 * workflow's random numbers meanwhile (an interceptor's span ids do): `uuid4()` would shift with them.
 */
export function derivedId(key: string): string {
  const words = [0x811c9dc5, 0x01000193, 0x9e3779b9, 0x85ebca6b].map((seed) => {
    let h = seed >>> 0;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
    return h.toString(16).padStart(8, '0');
  });
  const hex = words.join('');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
