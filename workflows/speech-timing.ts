/** How long saying `text` takes, in simulated seconds: about 2.5 words a second, at least one second. */
export function speakingSeconds(text: string): number {
  const words = text.trim().split(/\s+/).filter(Boolean).length;
  return Math.max(1, Math.round((words / 2.5) * 10) / 10);
}
