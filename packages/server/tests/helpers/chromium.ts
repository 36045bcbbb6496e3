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

/** A file the page origin serves: its type and body. */
export interface PageFile {
  type: string
  body: string
}

/**
 * An editor page on its own loopback origin, as a CMS would serve it: `files` by path, and a
 * blank page for any other path.
 */
export async function startPageOrigin(
  t: TestContext,
  files: Record<string, PageFile> = {},
): Promise<string> {
  const server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://page.invalid').pathname]
    res.writeHead(200, { 'content-type': file?.type ?? 'text/html; charset=utf-8' })
    res.end(file?.body ?? '<!doctype html><title>editor page</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
