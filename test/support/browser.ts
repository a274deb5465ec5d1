import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';

// Real headless Chromium for the dashboard tests: the machine's own (Debian's `chromium`
// package, which .ci/run installs), driven by playwright-core. No browser is ever downloaded.

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium binary, or null when the machine has none (the browser tests then skip, saying so). */
export function chromiumPath(): string | null {
  return (
    CANDIDATES.find((candidate): candidate is string => Boolean(candidate && existsSync(candidate))) ?? null
  );
}

export const SCREENSHOT_DIR = path.resolve('.data/screenshots');

/** Saves the page as .data/screenshots/<name>.png (the test artifact folder, not committed). */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}
