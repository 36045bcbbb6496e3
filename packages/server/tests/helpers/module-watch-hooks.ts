/**
 * Module hooks of `module-watch.ts`, run on Node's hooks thread: each module's URL is appended
 * to the record file as it loads, and a refused package does not resolve, as if it were not
 * installed.
 */
import { appendFileSync } from 'node:fs'

interface Settings {
  record?: string
  refuse: string[]
}

let settings: Settings = { refuse: [] }

export function initialize(data: Settings): void {
  settings = data
}

type Next<A extends unknown[], R> = (...args: A) => Promise<R>

export async function resolve(
  specifier: string,
  context: { parentURL?: string },
  next: Next<[string, { parentURL?: string }], unknown>,
): Promise<unknown> {
  const name = packageOf(specifier)
  if (name && settings.refuse.includes(name)) {
    // What Node answers for a package that is not installed.
    const e = new Error(
      `Cannot find package '${name}' imported from ${context.parentURL ?? 'the command line'}`,
    ) as NodeJS.ErrnoException
    e.code = 'ERR_MODULE_NOT_FOUND'
    throw e
  }
  return next(specifier, context)
}

export async function load(
  url: string,
  context: object,
  next: Next<[string, object], unknown>,
): Promise<unknown> {
  if (settings.record) appendFileSync(settings.record, `${url}\n`)
  return next(url, context)
}

/** The npm package a bare specifier names; undefined for a path, a URL or a builtin. */
export function packageOf(specifier: string): string | undefined {
  if (/^(\.|\/|[a-z]+:)/i.test(specifier)) return undefined
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}
