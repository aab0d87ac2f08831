/** A 32-byte master key written as 64 hex digits or base64 (standard or URL-safe); undefined when it is neither. */
export function decodeMasterKey(text: string): Buffer | undefined {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return undefined;
  const bytes = Buffer.from(t, /[-_]/.test(t) ? 'base64url' : 'base64');
  return bytes.length === 32 ? bytes : undefined;
}
