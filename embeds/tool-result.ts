import { createHash } from 'node:crypto';
import type { StoredPreview } from '../db/schema.ts';
import { checkCanvas, type Canvas } from './canvas.ts';

/**
 * A tool's raw result, taken apart: the data (what the model reads and the embed stores), previews (each with a
 * content hash Cadenza computes), follow-up asks, instructions for the model and canvases; and what was dropped, why.
 */
export type ToolResultParts = {
  data: unknown;
  previews: StoredPreview[];
  followUps: string[];
  instructions?: string;
  canvases: Canvas[];
  warnings: string[];
};

/** The keys of a tool result that are not data. */
export const RESULT_KEYS = {
  previews: 'previews',
  followUps: 'suggestions_follow_up_requests',
  instructions: 'added_instructions',
  canvas: 'canvas',
};

const MAX_FOLLOW_UPS = 10;
const MAX_FOLLOW_UP_CHARS = 300;
const MAX_INSTRUCTION_CHARS = 4_000;
const MAX_PREVIEWS = 50;

/** Pure and deterministic: the activity that stores an embed and the one that shows the result to the model agree. */
export function splitToolResult(raw: unknown): ToolResultParts {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { data: raw, previews: [], followUps: [], canvases: [], warnings: [] };
  const {
    previews,
    suggestions_follow_up_requests: followUps,
    added_instructions: instructions,
    canvas,
    ...data
  } = raw as Record<string, unknown>;
  const warnings: string[] = [];
  const parts: ToolResultParts = {
    data,
    previews: takePreviews(previews, warnings),
    followUps: takeFollowUps(followUps, warnings),
    canvases: takeCanvases(canvas, warnings),
    warnings,
  };
  if (typeof instructions === 'string' && instructions.trim()) parts.instructions = instructions.trim().slice(0, MAX_INSTRUCTION_CHARS);
  else if (instructions !== undefined) warnings.push(`${RESULT_KEYS.instructions} dropped: not a non-empty string`);
  return parts;
}

/** The sha256 of a preview's content (its keys sorted, any `hash` it came with left out). */
export function previewHash(preview: Record<string, unknown>): string {
  const { hash: _ignored, ...content } = preview;
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

function takePreviews(value: unknown, warnings: string[]): StoredPreview[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return (void warnings.push(`${RESULT_KEYS.previews} dropped: not a list`), []);
  const kept = value.filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null && !Array.isArray(p));
  if (kept.length < value.length) warnings.push(`${value.length - kept.length} preview(s) dropped: not objects`);
  if (kept.length > MAX_PREVIEWS) warnings.push(`previews beyond ${MAX_PREVIEWS} dropped`);
  // A hash the tool sent is replaced: only Cadenza's tells a server-produced preview from an edited one.
  return kept.slice(0, MAX_PREVIEWS).map((p) => ({ ...p, hash: previewHash(p) }));
}

function takeFollowUps(value: unknown, warnings: string[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return (void warnings.push(`${RESULT_KEYS.followUps} dropped: not a list`), []);
  const asks = value.filter((s): s is string => typeof s === 'string' && s.trim().length > 0).map((s) => s.trim());
  if (asks.length < value.length) warnings.push(`${value.length - asks.length} follow-up(s) dropped: not text`);
  const fitting = asks.filter((s) => s.length <= MAX_FOLLOW_UP_CHARS);
  if (fitting.length < asks.length)
    warnings.push(`${asks.length - fitting.length} follow-up(s) dropped: over ${MAX_FOLLOW_UP_CHARS} characters`);
  if (fitting.length > MAX_FOLLOW_UPS) warnings.push(`follow-ups beyond ${MAX_FOLLOW_UPS} dropped`);
  return fitting.slice(0, MAX_FOLLOW_UPS);
}

function takeCanvases(value: unknown, warnings: string[]): Canvas[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((item, i) => {
    const checked = checkCanvas(item);
    if (checked.ok) return [checked.canvas];
    warnings.push(`canvas ${i + 1} dropped: ${checked.problem}`);
    return [];
  });
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
