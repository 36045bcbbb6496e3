import { randomBytes } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { png } from '../../tests/helpers/fixtures.js'
import { multipartBody } from '../../tests/helpers/multipart.js'
import { sendFrom } from '../../tests/helpers/post-from.js'
import {
  BENCH_TOKEN_ENTRY,
  BENCH_USER,
  fmt,
  inTempDir,
  type Profile,
  ueditorConfig,
  using,
} from '../context.js'
import { type CpuPerRequest, cpuText, postgresCpu, postgresDatabase } from '../postgres.js'
import { type ServerProcess, startUeditor } from '../processes.js'
import type { Row } from '../report.js'

/*
 * One signed-in client, not exempt from the limits (the bench user is), sends small image
 * uploads one after another, in turns to each node, far faster than `limits.uploadsPerMinute`.
 * On two nodes of one PostgreSQL index the limit must hold once for both (the shared
 * `rate_limits` table); the same flood on one SQLite node (the in-memory limiter) is the
 * baseline for what the shared count costs a request.
 */
const LIMITED_USER = 'limited'
// Warms both nodes' paths (an allowed upload, a refused one) before the measured flood.
const WARM_USER = 'warm'

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length * q)] ?? Number.NaN
const median = (values: number[]) => quantile(values, 0.5)

interface Flood {
  accepted: number[]
  refused: number[]
  /** Answers other than SUCCESS and UE_RATE_LIMITED, by code. */
  other: Map<string, number>
  /**
   * CPU µs per accepted and per refused upload of the nodes (together) and, on PostgreSQL, of
   * the cluster: each request's share read around it, as the flood sends one at a time.
   */
  acceptedCpu: CpuPerRequest
  refusedCpu: CpuPerRequest
}

function imageUpload(token: string) {
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'dot.png', value: png(16, 16), contentType: 'image/png' },
  ])
  return {
    headers: {
      'Content-Type': contentType,
      'Content-Length': body.length,
      Authorization: `Bearer ${token}`,
    },
    body,
  }
}

/** `count` uploads, one at a time, in turns to each of `nodes`: each answer's code and time. */
async function flood(
  nodes: ServerProcess[],
  agent: Agent,
  token: string,
  count: number,
  database?: () => number,
): Promise<Flood> {
  const request = imageUpload(token)
  const answers = { accepted: [] as number[], refused: [] as number[] }
  const other = new Map<string, number>()
  const spent = {
    accepted: { server: 0, database: 0 },
    refused: { server: 0, database: 0 },
  }
  const serverCpu = () => nodes.reduce((sum, n) => sum + n.cpuMicros(), 0)
  for (let i = 0; i < count; i++) {
    const node = nodes[i % nodes.length] as ServerProcess
    const cpuBefore = serverCpu()
    const databaseBefore = database?.() ?? 0
    const began = performance.now()
    const res = await sendFrom(`${node.url}/ueditor?action=image`, {
      method: 'POST',
      ...request,
      agent,
      timeoutMs: 30_000,
    })
    const ms = performance.now() - began
    let answer: { state?: string; code?: string } = {}
    try {
      answer = JSON.parse(res.body.toString())
    } catch {}
    const kind =
      answer.state === 'SUCCESS'
        ? 'accepted'
        : answer.code === 'UE_RATE_LIMITED'
          ? 'refused'
          : undefined
    if (kind === undefined) {
      const code = answer.code ?? `HTTP ${res.status}`
      other.set(code, (other.get(code) ?? 0) + 1)
      continue
    }
    answers[kind].push(ms)
    spent[kind].server += serverCpu() - cpuBefore
    spent[kind].database += (database?.() ?? 0) - databaseBefore
  }
  const perRequest = (kind: 'accepted' | 'refused'): CpuPerRequest => {
    const n = Math.max(answers[kind].length, 1)
    return {
      server: spent[kind].server / n,
      ...(database ? { database: spent[kind].database / n } : {}),
    }
  }
  return {
    ...answers,
    other,
    acceptedCpu: perRequest('accepted'),
    refusedCpu: perRequest('refused'),
  }
}

/** The flood's answers other than SUCCESS and UE_RATE_LIMITED fail the scenario loudly. */
function onlyRateLimited(where: string, f: Flood): void {
  if (f.other.size === 0) return
  const codes = [...f.other].map(([k, v]) => `${v} × ${k}`).join(', ')
  throw new Error(`${where}: refusals other than UE_RATE_LIMITED: ${codes}`)
}

/** Per-client limits on two PostgreSQL nodes (one shared count) against one SQLite node. */
export function sharedLimiterScenarios(p: Profile): Promise<Row[]> {
  const limit = p.smoke ? 20 : 60
  const sent = p.smoke ? 50 : 150
  const warm = p.smoke ? 30 : 100
  return inTempDir(async (dir): Promise<Row[]> => {
    const limitedToken = randomBytes(24).toString('base64url')
    const warmToken = randomBytes(24).toString('base64url')
    const settings = (name: string, index?: object) =>
      ueditorConfig(join(dir, name), {
        auth: {
          mode: 'tokens',
          tokens: [
            BENCH_TOKEN_ENTRY,
            `${LIMITED_USER}:${limitedToken}`,
            `${WARM_USER}:${warmToken}`,
          ],
        },
        limits: { exemptUsers: [BENCH_USER], uploadsPerMinute: limit },
        ...(index ? { index } : {}),
      })
    const agent = new Agent({ keepAlive: true })
    try {
      const url = await postgresDatabase()
      const index = { driver: 'postgres', url, poolSize: 4 }
      const nodeA = join(dir, 'a')
      const nodeB = join(dir, 'b')
      await mkdir(nodeA)
      await mkdir(nodeB)
      const database = await postgresCpu(url)
      const shared = await using(startUeditor(nodeA, settings('data-a', index)), (a) =>
        using(startUeditor(nodeB, settings('data-b', index)), async (b) => {
          await flood([a, b], agent, warmToken, warm)
          return flood([a, b], agent, limitedToken, sent, database)
        }),
      )
      onlyRateLimited('two PostgreSQL nodes', shared)
      const single = await using(startUeditor(dir, settings('data-sqlite')), async (s) => {
        await flood([s], agent, warmToken, warm)
        return flood([s], agent, limitedToken, sent)
      })
      onlyRateLimited('one SQLite node', single)

      const answered = (f: Flood) =>
        `${f.accepted.length} accepted, ${f.refused.length} × UE_RATE_LIMITED`
      const times = (f: Flood) =>
        `median refused ${fmt(median(f.refused), 2)} ms (CPU ${cpuText(f.refusedCpu)}), ` +
        `accepted ${fmt(median(f.accepted), 2)} ms (CPU ${cpuText(f.acceptedCpu)})`
      const refusedRatio = median(shared.refused) / median(single.refused)
      const acceptedRatio = median(shared.accepted) / median(single.accepted)
      return [
        {
          scenario: `two nodes on one PostgreSQL index: ${sent} image uploads from one client, in turns to each node, limits.uploadsPerMinute ${limit}`,
          server: answered(shared),
          baseline: `one SQLite node: ${answered(single)}`,
          target: {
            what: 'uploads accepted by both nodes',
            value: shared.accepted.length,
            unit: 'uploads',
            op: '<=',
            limit,
          },
          figures: {
            limit,
            sent,
            accepted: shared.accepted.length,
            refused: shared.refused.length,
            sqliteAccepted: single.accepted.length,
            sqliteRefused: single.refused.length,
          },
        },
        {
          scenario:
            'the shared count’s cost: the same flood, two PostgreSQL nodes against one SQLite node (in-memory limiter)',
          server: `${times(shared)}; ${fmt(refusedRatio, 2)}x the refused median, ${fmt(acceptedRatio, 2)}x the accepted`,
          baseline: `one SQLite node: ${times(single)}`,
          figures: {
            refusedMedianMs: median(shared.refused),
            acceptedMedianMs: median(shared.accepted),
            sqliteRefusedMedianMs: median(single.refused),
            sqliteAcceptedMedianMs: median(single.accepted),
            refusedRatio,
            acceptedRatio,
            refusedServerCpuMicros: shared.refusedCpu.server,
            refusedPostgresCpuMicros: shared.refusedCpu.database ?? Number.NaN,
            acceptedServerCpuMicros: shared.acceptedCpu.server,
            acceptedPostgresCpuMicros: shared.acceptedCpu.database ?? Number.NaN,
            sqliteRefusedServerCpuMicros: single.refusedCpu.server,
            sqliteAcceptedServerCpuMicros: single.acceptedCpu.server,
          },
        },
      ]
    } finally {
      agent.destroy()
    }
  })
}
