import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
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

/** A blank editor page on its own loopback origin, as a CMS would serve it. */
export async function startPageOrigin(t: TestContext): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>editor page</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
