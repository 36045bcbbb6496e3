import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  AUTHORIZATION,
  fmt,
  inTempDir,
  type Profile,
  stolenText,
  ueditorConfig,
  using,
  withCpu,
} from '../context.js'
import { load, warmUp } from '../load.js'
import { type ServerProcess, startBare, startUeditor } from '../processes.js'
import type { Row } from '../report.js'

const CONNECTIONS = 50
/** Busy microseconds per request of the calibration rows: what a given cost does to the ratio. */
const CALIBRATION_MICROS = [5, 20]

interface Measured {
  perSecond: number
  cpuPerRequest: number
  stolenShare: number
}

// Every side gets the same request: the signed-in editor's, with the bench user's token.
const headers = AUTHORIZATION

async function measure(server: ServerProcess, url: string, p: Profile): Promise<Measured> {
  await warmUp({ url, connections: CONNECTIONS, headers }, p.warmSeconds, p.warmRequests)
  const { result, cpuMicros, stolenShare } = await withCpu(server, () =>
    load({ url, connections: CONNECTIONS, seconds: p.seconds, headers }),
  )
  return { perSecond: result.perSecond, cpuPerRequest: cpuMicros / result.requests, stolenShare }
}

const text = (m: Measured) =>
  `${fmt(m.perSecond)} req/s, ${fmt(m.cpuPerRequest)} µs CPU/req, ${stolenText(m.stolenShare)}`

/*
 * The target is on CPU time, not req/s: on a shared machine req/s moves with whatever else
 * runs, while each process's own CPU time per request barely does. 0.5x is at most twice the CPU
 * per request of Fastify answering the same bytes with its defaults, while this server checks
 * the bench's Bearer token on every request. Bare's ratio is reported beside it.
 */
const CPU_RATIO_TARGET = 0.5

/** `config` GET against Fastify and a bare node:http server answering the very same bytes. */
export function configScenario(p: Profile): Promise<Row[]> {
  return inTempDir((dir) =>
    using(startUeditor(dir, ueditorConfig(join(dir, 'data'))), async (ue) => {
      const url = `${ue.url}/ueditor?action=config`
      const answer = await fetch(url, { headers })
      const bytes = join(dir, 'config-answer')
      await writeFile(bytes, Buffer.from(await answer.arrayBuffer()))
      const type = answer.headers.get('content-type') ?? 'application/json'
      const baseline = await using(startBare(['bytes', bytes, type]), (b) =>
        measure(b, `${b.url}/ueditor?action=config`, p),
      )
      // The target's baseline: a popular framework on the same answer.
      const framework = await using(startBare(['fastify-bytes', bytes, type]), (f) =>
        measure(f, `${f.url}/ueditor?action=config`, p),
      )
      const calibration: { micros: number; m: Measured }[] = []
      for (const micros of CALIBRATION_MICROS) {
        const m = await using(startBare(['bytes-after', bytes, type, String(micros)]), (b) =>
          measure(b, `${b.url}/ueditor?action=config`, p),
        )
        calibration.push({ micros, m })
      }
      const server = await measure(ue, url, p)
      const rows: Row[] = [
        {
          scenario: `config GET, auth on, ${CONNECTIONS} connections`,
          server:
            `${text(server)}; ${(server.perSecond / baseline.perSecond).toFixed(2)} x bare req/s, ` +
            `bare CPU/req ÷ this server’s ${(baseline.cpuPerRequest / server.cpuPerRequest).toFixed(2)} x`,
          baseline: `Fastify: ${text(framework)}`,
          target: {
            what: 'Fastify CPU/req ÷ this server’s',
            value: framework.cpuPerRequest / server.cpuPerRequest,
            unit: 'x',
            op: '>=',
            limit: CPU_RATIO_TARGET,
          },
          figures: {
            reqPerSec: server.perSecond,
            cpuMicrosPerReq: server.cpuPerRequest,
            bareReqPerSec: baseline.perSecond,
            bareCpuMicrosPerReq: baseline.cpuPerRequest,
            fastifyCpuMicrosPerReq: framework.cpuPerRequest,
            stolenShare: server.stolenShare,
            bareStolenShare: baseline.stolenShare,
          },
        },
        {
          scenario: `config GET, Fastify answering the same bytes (reference), ${CONNECTIONS} connections`,
          server: `${text(framework)}; ${(framework.perSecond / baseline.perSecond).toFixed(2)} x bare`,
          baseline: text(baseline),
          figures: {
            reqPerSec: framework.perSecond,
            cpuMicrosPerReq: framework.cpuPerRequest,
            bareReqPerSec: baseline.perSecond,
            bareCpuMicrosPerReq: baseline.cpuPerRequest,
          },
        },
        ...calibration.map(({ micros, m }) => ({
          scenario: `config GET, bare after ${micros} µs of busy work per request (reference), ${CONNECTIONS} connections`,
          server: `${text(m)}; ${(m.perSecond / baseline.perSecond).toFixed(2)} x bare`,
          baseline: text(baseline),
          figures: {
            reqPerSec: m.perSecond,
            cpuMicrosPerReq: m.cpuPerRequest,
            bareReqPerSec: baseline.perSecond,
            workMicrosPerReq: micros,
          },
        })),
      ]
      return rows
    }),
  )
}
