import type { Logger } from './types.js'

type Level = 'debug' | 'info' | 'warn' | 'error'
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/** One JSON line per record on stderr; enough for containers and journald. */
export function consoleLogger(minLevel: Level = 'info'): Logger {
  const write = (level: Level) => (o: object, msg?: string) => {
    if (ORDER[level] < ORDER[minLevel]) return
    const record = { level, time: new Date().toISOString(), msg, ...serialise(o) }
    process.stderr.write(`${JSON.stringify(record)}\n`)
  }
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') }
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

function serialise(o: object): object {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v
  }
  return out
}
