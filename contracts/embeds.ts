/** An embed is one tool invocation's stored result; its status as clients see it. */
export type EmbedStatus = 'processing' | 'finished' | 'error' | 'cancelled';

/** What an `embed` event says of the result besides its status: counts only (the content stays in Postgres). */
export type EmbedSummary = { previews: number; canvases: number; followUps: number; warnings: number };

/** The canvas kinds a tool result may carry. */
export const CANVAS_TYPES = ['vega-lite', 'table', 'markdown'] as const;
export type CanvasType = (typeof CANVAS_TYPES)[number];

/** A tool call's end, in embed words (the workflow's `completed` is the embed's `finished`; a denied call was stopped by a person: `cancelled`). */
export function embedStatusOf(status: 'completed' | 'error' | 'cancelled' | 'denied'): Exclude<EmbedStatus, 'processing'> {
  return status === 'completed' ? 'finished' : status === 'denied' ? 'cancelled' : status;
}

/** The most tokens of one tool result the model is shown; beyond, the result is cut on a value boundary, with a note. */
export const TOOL_RESULT_MAX_TOKENS = 8_000;
