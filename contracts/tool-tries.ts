/** How the tries of one tool call are paced: shared by the tool activity (which waits) and its options (bounds). */

/** Pause before the try after the `failures`-th failed one: 1 s, 2 s, 4 s, then 8 s at most. */
export const toolRetryDelayMs = (failures: number): number => Math.min(2 ** (failures - 1), 8) * 1000;

/** How long the tries of a tool may take in all: every try at its timeout, plus the pauses between them. */
export function toolTriesBoundS(tool: { timeoutS: number; retries: number }): number {
  let pausesMs = 0;
  for (let n = 1; n <= tool.retries; n++) pausesMs += toolRetryDelayMs(n);
  return (tool.retries + 1) * tool.timeoutS + pausesMs / 1000;
}
