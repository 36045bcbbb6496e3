import { Writable } from 'node:stream'
import { createLogger, type LoggerOptions } from '../../src/shared/log.js'

/** The server's own logger writing JSON lines at `level`, each kept in `records` as parsed. */
export function jsonLog(level: LoggerOptions['level'] = 'info') {
  const records: Record<string, unknown>[] = []
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) records.push(JSON.parse(line))
      done()
    },
  })
  return { records, logger: createLogger({ level, format: 'json', destination }) }
}
