import { join } from 'node:path'
import type { IndexConfig } from '../../src/db/open.js'
import {
  AUTHORIZATION,
  BENCH_USER,
  fmt,
  inTempDir,
  type Profile,
  ueditorConfig,
  using,
} from '../context.js'
import { load } from '../load.js'
import { addImages, cachedSqliteImages, type IndexTarget, indexConfig } from '../populations.js'
import {
  type CpuPerRequest,
  cpuText,
  postgresCpu,
  postgresDatabase,
  withCpuPerRequest,
} from '../postgres.js'
import { type ServerProcess, startUeditor } from '../processes.js'
import type { Row } from '../report.js'

const CONNECTIONS = 10
const PAGE = 20
const DEEP_JUMPS = 5
// A p99 below this is noise on a shared machine; flatness is judged against it at least.
const FLOOR_MS = 1
const FLAT_RATIO = 2

const listed = (body: string) => body.includes('"state":"SUCCESS"') && body.includes('"url"')

interface Figures {
  population: number
  firstP99: number
  nextP99: number
  deepMs: number
  /** CPU µs per request of the server and (on PostgreSQL) of the cluster, first and next pages. */
  firstCpu: CpuPerRequest
  nextCpu: CpuPerRequest
}

async function total(server: ServerProcess): Promise<number> {
  const res = await fetch(`${server.url}/ueditor?action=listImage&start=0&size=1`, {
    headers: AUTHORIZATION,
  })
  return ((await res.json()) as { total: number }).total
}

/** The median of DEEP_JUMPS single requests, each to a different page in the last tenth. */
async function deepJumps(server: ServerProcess, population: number): Promise<number> {
  const times: number[] = []
  for (let k = 1; k <= DEEP_JUMPS; k++) {
    const start = population - Math.floor((population / 10) * (k / DEEP_JUMPS))
    const began = performance.now()
    const res = await fetch(`${server.url}/ueditor?action=listImage&start=${start}&size=${PAGE}`, {
      headers: AUTHORIZATION,
    })
    const body = await res.text()
    times.push(performance.now() - began)
    if (!listed(body)) throw new Error(`deep page ${start}: ${body.slice(0, 200)}`)
  }
  return times.sort((a, b) => a - b)[Math.floor(DEEP_JUMPS / 2)] as number
}

async function measure(
  server: ServerProcess,
  population: number,
  p: Profile,
  database: (() => number) | undefined,
): Promise<Figures> {
  const counted = await total(server)
  if (counted !== population)
    throw new Error(`the server counts ${counted} images, not ${population}`)
  const base = { connections: CONNECTIONS, headers: AUTHORIZATION, expect: listed }
  const first = `${server.url}/ueditor?action=listImage&start=0&size=${PAGE}`
  if (p.warmSeconds > 0) await load({ ...base, url: first, seconds: p.warmSeconds })
  const firstPage = await withCpuPerRequest(server, database, () =>
    load({ ...base, url: first, seconds: p.seconds }),
  )
  // Each connection pages like the editor's image manager (start += size), each from its own
  // part of the listing, so no two read the same pages: a page one has read is not the next
  // one's to find already in memory.
  const stride = Math.floor(population / CONNECTIONS / PAGE) * PAGE
  let connections = 0
  const nextPages = await withCpuPerRequest(server, database, () =>
    load({
      ...base,
      url: first,
      seconds: p.seconds,
      nextPath: (connection) => {
        const from = (connection.start as number | undefined) ?? connections++ * stride
        const start = (from + PAGE) % population
        connection.start = start
        return `/ueditor?action=listImage&start=${start}&size=${PAGE}`
      },
    }),
  )
  return {
    population,
    firstP99: firstPage.result.p99Ms,
    nextP99: nextPages.result.p99Ms,
    deepMs: await deepJumps(server, population),
    firstCpu: firstPage.cpu,
    nextCpu: nextPages.cpu,
  }
}

/** listImage at each population, grown in one SQLite file; the targets apply at the largest. */
export function listingScenarios(p: Profile): Promise<Row[]> {
  return listings(p, 'sqlite')
}

/** The same on a database of the run's own PostgreSQL cluster (postgres.ts). */
export function postgresListingScenarios(p: Profile): Promise<Row[]> {
  return listings(p, 'postgres')
}

function listings(p: Profile, driver: IndexTarget['driver']): Promise<Row[]> {
  return inTempDir(async (dir) => {
    const dataDir = join(dir, 'data')
    const target: IndexTarget =
      driver === 'sqlite'
        ? { driver, file: join(dataDir, 'index.db') }
        : { driver, url: await postgresDatabase() }
    const measured: Figures[] = []
    let have = 0
    for (const population of p.imagePopulations) {
      await addImages(target, BENCH_USER, have, population)
      have = population
      const database = target.driver === 'postgres' ? await postgresCpu(target.url) : undefined
      measured.push(await measureOn(dir, indexConfig(target), population, p, database))
    }
    // `--big` (run.ts): the cached index, opened where it is; the server only reads it.
    if (driver === 'sqlite' && p.big !== undefined) {
      const { file } = await cachedSqliteImages(p.big.cacheDir, BENCH_USER, p.big.images)
      measured.push(await measureOn(dir, { driver, file }, p.big.images, p, undefined))
    }
    return rows(measured, driver === 'postgres' ? ' on PostgreSQL' : '')
  })
}

/** A fresh server per population: what it caches, it learns from this population. */
function measureOn(
  dir: string,
  index: IndexConfig,
  population: number,
  p: Profile,
  database: (() => number) | undefined,
): Promise<Figures> {
  const config = ueditorConfig(join(dir, 'data'), { index })
  return using(startUeditor(dir, config), (s) => measure(s, population, p, database))
}

/** `engine` follows "listImage" in each row's name: '' for SQLite, whose rows came first. */
function rows(measured: Figures[], engine: string): Row[] {
  const smallest = measured[0] as Figures
  const largest = measured[measured.length - 1] as Figures
  const n = (v: number) =>
    v >= 1_000_000 ? `${v / 1_000_000}M` : v >= 1000 ? `${v / 1000}k` : `${v}`
  const across = (pick: (f: Figures) => number) =>
    measured.map((f) => `${n(f.population)}: ${fmt(pick(f), 1)} ms`).join(', ')
  const flat = (pick: (f: Figures) => number) =>
    Math.max(pick(largest), FLOOR_MS) / Math.max(pick(smallest), FLOOR_MS)
  const at = n(largest.population)
  const out: Row[] = []
  for (const [label, pick] of [
    ['first page', (f: Figures) => f.firstP99],
    ['next pages', (f: Figures) => f.nextP99],
  ] as const) {
    out.push({
      scenario: `listImage ${label}${engine}, p99 at ${CONNECTIONS} connections`,
      server: across(pick),
      target: { what: `p99 at ${at}`, value: pick(largest), unit: 'ms', op: '<=', limit: 5 },
      figures: Object.fromEntries(measured.map((f) => [`p99Ms@${f.population}`, pick(f)])),
    })
    if (engine !== '')
      out.push({
        scenario: `listImage ${label}${engine}, CPU per request`,
        server: measured
          .map(
            (f) =>
              `${n(f.population)}: ${cpuText(label === 'first page' ? f.firstCpu : f.nextCpu)}`,
          )
          .join('; '),
        figures: Object.fromEntries(
          measured.flatMap((f) => {
            const cpu = label === 'first page' ? f.firstCpu : f.nextCpu
            return [
              [`serverCpuMicros@${f.population}`, cpu.server],
              [`postgresCpuMicros@${f.population}`, cpu.database ?? 0],
            ]
          }),
        ),
      })
    out.push({
      scenario: `listImage ${label}${engine}, flat from ${n(smallest.population)} to ${at}`,
      server: across(pick),
      target: {
        what: `p99 ${at} / ${n(smallest.population)}`,
        value: flat(pick),
        unit: 'x',
        op: '<=',
        limit: FLAT_RATIO,
      },
    })
  }
  out.push({
    scenario: `listImage${engine} jump to a deep page (median of ${DEEP_JUMPS})`,
    server: across((f) => f.deepMs),
    target: { what: `at ${at}`, value: largest.deepMs, unit: 'ms', op: '<=', limit: 50 },
    figures: Object.fromEntries(measured.map((f) => [`deepMs@${f.population}`, f.deepMs])),
  })
  return out
}
