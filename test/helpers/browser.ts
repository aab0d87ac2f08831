import type { Browser, BrowserType } from 'playwright-core';

/**
 * Debian's Chromium (scripts/chromium.sh installs it and sets CHROMIUM_PATH), headless. Its own sandbox needs user
 * namespaces a root test process does not get, hence --no-sandbox: the page under test is our own.
 */
export async function launchChromium(type: BrowserType): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH;
  if (!executablePath) throw new Error('CHROMIUM_PATH is not set: run the browser tests through scripts/test.sh (it installs chromium)');
  return type.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Saves a screenshot under CONSOLE_SCREENSHOT_DIR when set (scripts/console-screenshots.sh), else nothing. */
export async function keepScreenshot(page: { screenshot(o: { path: string; fullPage?: boolean }): Promise<unknown> }, name: string) {
  const dir = process.env.CONSOLE_SCREENSHOT_DIR;
  if (dir) await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
}
