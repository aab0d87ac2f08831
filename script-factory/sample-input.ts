import type { Owner } from '../db/owner.ts';

/** How an embed id resolves to the tool result it holds (the embeds' repository); undefined when the owner has none. */
export type EmbedLookup = (owner: Owner, id: string) => Promise<unknown>;

/** `{embed: "<id>"}`: the sample is an earlier tool result, by its embed id. */
export const isEmbedReference = (sample: unknown): sample is { embed: string } =>
  sample !== null &&
  typeof sample === 'object' &&
  !Array.isArray(sample) &&
  Object.keys(sample).length === 1 &&
  typeof (sample as { embed?: unknown }).embed === 'string';

/**
 * The sample a factory runs its attempts on: inline JSON as given, or the result an embed of the owner holds. Someone
 * else's embed is not found, like a missing one (never revealed).
 */
export async function resolveSample(
  sample: unknown,
  owner: Owner,
  lookup: EmbedLookup,
): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  if (!isEmbedReference(sample)) return { ok: true, value: sample };
  const value = await lookup(owner, sample.embed);
  if (value === undefined) return { ok: false, error: `sample_input: embed ${sample.embed} not found` };
  return { ok: true, value };
}
