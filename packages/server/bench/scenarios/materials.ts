import { join } from 'node:path'
import { AUTHORIZATION, fmt, inTempDir, type Profile, ueditorConfig, using } from '../context.js'
import { load } from '../load.js'
import { addMaterials, type IndexTarget, indexConfig } from '../populations.js'
import { cpuText, postgresCpu, postgresDatabase, withCpuPerRequest } from '../postgres.js'
import { type ServerProcess, startUeditor } from '../processes.js'
import type { Row } from '../report.js'

const CONNECTIONS = 10
const KEYWORD = '标题'
const found = (body: string) => body.includes('"items":[{')

async function p99(
  server: ServerProcess,
  query: string,
  p: Profile,
  database: (() => number) | undefined,
) {
  const url = `${server.url}/materials/materials?${query}&page=1&pageSize=20`
  const base = { url, connections: CONNECTIONS, headers: AUTHORIZATION, expect: found }
  if (p.warmSeconds > 0) await load({ ...base, seconds: p.warmSeconds })
  return withCpuPerRequest(server, database, () => load({ ...base, seconds: p.seconds }))
}

/** The designer's search: a CJK keyword, a parent category (its whole subtree), and both. */
export function materialsScenarios(p: Profile): Promise<Row[]> {
  return search(p, 'sqlite')
}

/** The same on a database of the run's own PostgreSQL cluster (postgres.ts). */
export function postgresMaterialsScenarios(p: Profile): Promise<Row[]> {
  return search(p, 'postgres')
}

function search(p: Profile, driver: IndexTarget['driver']): Promise<Row[]> {
  return inTempDir(async (dir) => {
    const dataDir = join(dir, 'data')
    const target: IndexTarget =
      driver === 'sqlite'
        ? { driver, file: join(dataDir, 'index.db') }
        : { driver, url: await postgresDatabase() }
    const { parentId } = await addMaterials(target, p.materials)
    const config = ueditorConfig(dataDir, {
      index: indexConfig(target),
      materials: { seed: false },
    })
    const engine = driver === 'postgres' ? ' on PostgreSQL' : ''
    const database = target.driver === 'postgres' ? await postgresCpu(target.url) : undefined
    const keyword = `keyword=${encodeURIComponent(KEYWORD)}`
    return using(startUeditor(dir, config), async (server) => {
      const rows: Row[] = []
      for (const [label, query] of [
        [`keyword ${KEYWORD}`, `categoryId=0&${keyword}`],
        ['parent category', `categoryId=${parentId}`],
        [`parent category and ${KEYWORD}`, `categoryId=${parentId}&${keyword}`],
      ] as const) {
        const { result: r, cpu } = await p99(server, query, p, database)
        rows.push({
          scenario: `materials search${engine}, ${label}, ${fmt(p.materials)} materials, ${CONNECTIONS} connections`,
          server: `${fmt(r.perSecond)} req/s, p50 ${fmt(r.p50Ms, 1)} ms, p99 ${fmt(r.p99Ms, 1)} ms; CPU/req ${cpuText(cpu)}`,
          target: { what: 'p99', value: r.p99Ms, unit: 'ms', op: '<=', limit: 20 },
          figures: {
            perSecond: r.perSecond,
            p50Ms: r.p50Ms,
            p99Ms: r.p99Ms,
            serverCpuMicros: cpu.server,
            ...(cpu.database === undefined ? {} : { postgresCpuMicros: cpu.database }),
          },
        })
      }
      return rows
    })
  })
}
