import { createHash } from 'node:crypto';
import type { FakeProtocol } from './fake-model-types.ts';

/** What the cache did for one request, in tokens (4 characters a token, as the rest of the fake's usage). */
export type CacheUsage = { readTokens: number; creationTokens: number };

/** The providers cache nothing shorter than 1,024 tokens. */
const MIN_CHARS = 1_024 * 4;
/** OpenAI reports cache hits in steps of 128 tokens. */
const OPENAI_STEP = 128;

type Unit = { text: string; breakpoint: boolean };

/**
 * The fake server's prompt cache, behaving as the providers document theirs. Anthropic caches the prompt up to each
 * `cache_control` breakpoint (tools, then system, then messages, block by block) and a later request reads the longest
 * cached prefix it starts with; a breakpoint past that prefix writes the difference. OpenAI caches every prompt's
 * prefixes at message boundaries by itself and reports the longest one a request repeats. Prefixes are compared
 * without their `cache_control` markers, as the provider does, so a breakpoint that moves does not break the match.
 */
export function createPromptCache() {
  const cached = new Set<string>();
  return {
    observe(protocol: FakeProtocol, body: unknown): CacheUsage {
      const units = protocol === 'anthropic' ? anthropicUnits(body) : openaiUnits(body);
      const prefixes = chain(units);
      const hit = prefixes.findLast((p) => cached.has(p.hash));
      const readChars = hit?.chars ?? 0;
      if (protocol === 'openai') {
        for (const p of prefixes) if (p.chars >= MIN_CHARS) cached.add(p.hash);
        const read = Math.floor(tokens(readChars) / OPENAI_STEP) * OPENAI_STEP;
        return { readTokens: read, creationTokens: 0 };
      }
      const marks = prefixes.filter((p) => p.breakpoint && p.chars >= MIN_CHARS);
      for (const p of marks) cached.add(p.hash);
      const written = Math.max(0, (marks.at(-1)?.chars ?? 0) - readChars);
      return { readTokens: tokens(readChars), creationTokens: tokens(written) };
    },
    reset: () => cached.clear(),
  };
}

const tokens = (chars: number) => Math.ceil(chars / 4);

function chain(units: Unit[]): Array<{ hash: string; chars: number; breakpoint: boolean }> {
  let hash = '';
  let chars = 0;
  return units.map((u) => {
    hash = createHash('sha256').update(hash).update(u.text).digest('hex');
    chars += u.text.length;
    return { hash, chars, breakpoint: u.breakpoint };
  });
}

/** A block as text for comparison, its `cache_control` left out; whether it carried one. */
function unit(prefix: string, block: unknown): Unit {
  const { cache_control: mark, ...rest } = (typeof block === 'object' && block !== null ? block : { text: block }) as Record<
    string,
    unknown
  >;
  return { text: `${prefix}${JSON.stringify(rest)}`, breakpoint: mark !== undefined };
}

function anthropicUnits(body: unknown): Unit[] {
  const b = (body ?? {}) as { tools?: unknown[]; system?: unknown; messages?: Array<{ role?: string; content?: unknown }> };
  const system = typeof b.system === 'string' ? [{ type: 'text', text: b.system }] : Array.isArray(b.system) ? b.system : [];
  return [
    ...(b.tools ?? []).map((t) => unit('tool:', t)),
    ...system.map((s) => unit('system:', s)),
    ...(b.messages ?? []).flatMap((m) =>
      (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : []).map((c) =>
        unit(`${m.role}:`, c),
      ),
    ),
  ];
}

function openaiUnits(body: unknown): Unit[] {
  const b = (body ?? {}) as { tools?: unknown[]; messages?: unknown[] };
  return [...(b.tools?.length ? [unit('tools:', { tools: b.tools })] : []), ...(b.messages ?? []).map((m) => unit('message:', m))];
}
