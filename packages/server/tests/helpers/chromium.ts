import { existsSync } from 'node:fs'
import type { TestContext } from 'node:test'
import { type Browser, chromium } from 'playwright-core'

const EXECUTABLE = process.env.UE_TEST_CHROMIUM ?? '/usr/bin/chromium'

// Headless, offline and unsandboxed, as on the loaders package's browser lane.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

/**
 * Launches Debian's Chromium. Locally a missing browser skips the test with a reason; with
 * CI=true it is a failure, so no lane is ever silently skipped in CI.
 */
export async function launchChromium(t: TestContext): Promise<Browser | null> {
  if (!existsSync(EXECUTABLE)) {
    if (process.env.CI === 'true') throw new Error(`Chromium not found at ${EXECUTABLE} (CI=true)`)
    t.skip(`Chromium not found at ${EXECUTABLE}; install the Debian package "chromium"`)
    return null
  }
  const browser = await chromium.launch({ executablePath: EXECUTABLE, args: ARGS })
  t.after(() => browser.close())
  return browser
}
