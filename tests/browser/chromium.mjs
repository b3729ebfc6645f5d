// Headless Chromium for the browser tests: Debian's /usr/bin/chromium (or
// $CHROMIUM) driven by playwright-core (never `npx playwright install`: it would
// download a browser), with a fresh profile and the flags that keep it quiet on
// a closed network. launch() refuses --user-data-dir, hence a persistent context.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

/**
 * Starts Chromium with a fresh temporary profile. `options` go to
 * launchPersistentContext (e.g. viewport). close() closes the browser and
 * removes the profile.
 */
export async function launchChromium(options = {}) {
  const profile = await mkdtemp(join(tmpdir(), 'attnwasm-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, ...options });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      await rm(profile, { recursive: true, force: true });
    },
  };
}
