import { CliError, EXIT, exitCodeOf } from './exit-codes.ts';
import type { CliSettings } from './settings.ts';

/** An API answer as the CLI reads it: the shapes are the OpenAPI document's (GET /api/v1/openapi.json). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

type RequestOptions = { json?: unknown; raw?: Buffer | string; contentType?: string; admin?: boolean; signal?: AbortSignal };

/** The public HTTP API, as the CLI calls it: a refusal becomes a CliError naming the API's own message. */
export function createCliApi(settings: CliSettings) {
  async function send(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const key = o.admin ? (settings.adminKey ?? settings.apiKey) : settings.apiKey;
    if (!key) {
      const variable = o.admin ? 'CADENZA_ADMIN_KEY' : 'CADENZA_API_KEY';
      throw new CliError(`no API key: set ${variable} or put it in ${settings.configFile}`, EXIT.auth);
    }
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    let body: string | Buffer | undefined;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['content-type'] = 'application/json';
    } else if (o.raw !== undefined) {
      body = o.raw;
      headers['content-type'] = o.contentType ?? 'application/octet-stream';
    }
    let res: Response;
    try {
      res = await fetch(`${settings.url}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the Cadenza API at ${settings.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
        EXIT.unavailable,
      );
    }
    if (res.status >= 400) {
      const text = await res.text();
      let message = text.slice(0, 500);
      try {
        const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
        if (parsed.error?.message) message = `${parsed.error.message} (${parsed.error.code})`;
      } catch {
        /* not the API's JSON error: keep the text */
      }
      throw new CliError(`${method} ${path} → ${res.status}: ${message}`, exitCodeOf(res.status));
    }
    return res;
  }
  return {
    settings,
    send,
    async json<T = Json>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
      const res = await send(method, path, o);
      return (res.status === 204 ? undefined : await res.json()) as T;
    },
  };
}
export type CliApi = ReturnType<typeof createCliApi>;
