// The diagnostics page in Chromium: dining philosophers (workers that block,
// and the page, waiting with lockAsync) taking their left fork first. With
// deadlock detection off the table freezes and the page shows the cycle from
// rt.checkDeadlock(); with it on, a philosopher gets DeadlockError, the page
// shows it, and the meals keep coming.
import { describe, expect, it } from 'vitest';
import { openPage, screenshot, useServerAndBrowser } from './browser.js';

const env = useServerAndBrowser();

describe('the diagnostics page', () => {
  it('detection off: the table freezes in a deadlock and the page shows its cycle, page included; detection on: DeadlockError shown, the philosophers keep eating', async () => {
    const { page, errors } = await openPage(env.browser, `${env.server.url}diagnostics.html`);
    await page.waitForSelector('#diag[data-state=idle]');
    await page.fill('#workers', '5');
    await page.selectOption('#mode', 'deadlocking');
    await page.uncheck('#detection');
    await page.click('#start');
    await page.waitForSelector('#diag[data-state=running]');
    await page.waitForSelector('#status[data-state=deadlock]', { timeout: 60_000 });
    const cycle = await page.locator('#cycle').textContent();
    console.log(`detection off: ${cycle}`);
    // All six seats are in the ring: five workers and the page's async waiter.
    for (const name of ['philosopher 0', 'philosopher 4', 'page']) expect(cycle).toContain(name);
    expect(cycle).toMatch(/6 threads/);
    expect(await page.locator('#forks').textContent()).toContain('page (async)');
    // Frozen: no meal while we look.
    const frozen = await page.locator('#meals').getAttribute('data-total');
    await page.waitForTimeout(500);
    expect(await page.locator('#meals').getAttribute('data-total')).toBe(frozen);
    await screenshot(page, 'diagnostics-deadlock');
    await page.click('#stop');
    await page.waitForSelector('#diag[data-state=stopped]');

    await page.check('#detection');
    await page.click('#start');
    await page.waitForSelector('#diag[data-state=running]');
    await page.waitForSelector('#status[data-state=detected]', { timeout: 60_000 });
    const first = Number(await page.locator('#meals').getAttribute('data-total'));
    await page.waitForTimeout(1500);
    const later = Number(await page.locator('#meals').getAttribute('data-total'));
    const refusal = await page.locator('#refusals li').first().textContent();
    console.log(`detection on: ${refusal} (meals ${first} -> ${later}, ${await page.locator('#refusal-count').textContent()} DeadlockErrors)`);
    expect(later).toBeGreaterThan(first);
    expect(refusal).toMatch(/^(philosopher \d|page) got DeadlockError: its wait would have closed the cycle /);
    expect(await page.locator('#status').getAttribute('data-state')).not.toBe('deadlock');
    await screenshot(page, 'diagnostics-detected');
    await page.click('#stop');
    await page.waitForSelector('#diag[data-state=stopped]');
    expect(errors).toEqual([]);
    await page.close();
  });
});
