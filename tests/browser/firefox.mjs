// Starting Debian's Firefox ESR headless, for the browser tests
// (firefox.test.ts) and the Firefox benchmark (bench/browser/firefox.mjs),
// driven through WebDriver BiDi by puppeteer-core. close() ends the session
// and makes sure of the browser's process by the PID it started.
import puppeteer from 'puppeteer-core';

/** Debian's firefox-esr (scripts/setup.sh installs it); PARKLOT_FIREFOX names another. */
export const FIREFOX = process.env.PARKLOT_FIREFOX ?? '/usr/bin/firefox-esr';

/**
 * Headless Firefox with a fresh profile (puppeteer's, removed again by close()).
 * @returns {Promise<{ browser: import('puppeteer-core').Browser, pid: number | undefined, version: string, close(): Promise<void> }>}
 */
export async function launchFirefox() {
  const browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true });
  const child = browser.process();
  return {
    browser,
    pid: child?.pid,
    /** "153.8.0esr": the driver's "firefox/153.8.0esr" without the name. */
    version: (await browser.version()).replace(/^[^/]*\//, ''),
    close: async () => {
      try {
        await browser.close();
      } finally {
        // browser.close() waits for the process; this is for a session that could not end.
        if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
      }
    },
  };
}
