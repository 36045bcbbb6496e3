/**
 * `npm run bench`: each scenario beside its bare baseline in the same run (docs/benchmarks.md).
 * `npm run bench -- --smoke` runs the same harness on tiny populations and never fails on targets.
 * Loopback only; every load is bounded in time or count, so the run stops by itself.
 */
import { statfs } from 'node:fs/promises'
import { cpus, freemem, homedir, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  FULL,
  type Profile,
  removeScratch,
  SMOKE,
  stolenSince,
  stolenText,
  upTo,
} from './context.js'
import { PostgresUnavailable, stopPostgres } from './postgres.js'
import { machineCpuTicks } from './processes.js'
import {
  broken,
  judge,
  type Outcome,
  type Row,
  skipped,
  table,
  tally,
  writeResults,
} from './report.js'
import { catchScenario } from './scenarios/catch.js'
import { configScenario } from './scenarios/config.js'
import { formulaFloodScenario } from './scenarios/formula-flood.js'
import { listingScenarios, postgresListingScenarios } from './scenarios/listings.js'
import { materialsScenarios, postgresMaterialsScenarios } from './scenarios/materials.js'
import { resumableUploadScenarios } from './scenarios/resumable.js'
import { sharedLimiterScenarios } from './scenarios/shared-limiter.js'
import { startUpScenarios } from './scenarios/start-up.js'
import { largeUploadScenarios, smallUploadScenarios } from './scenarios/uploads.js'
import { wordScenario } from './scenarios/word.js'

const RESULTS = fileURLToPath(new URL('../../bench/results.json', import.meta.url))

const SCENARIOS: [string, (p: Profile) => Promise<Row[]>][] = [
  ['start-up', startUpScenarios],
  ['config GET', configScenario],
  ['100 KB PNG uploads', smallUploadScenarios],
  ['large uploads', largeUploadScenarios],
  ['resumable upload', resumableUploadScenarios],
  ['listImage', listingScenarios],
  ['materials search', materialsScenarios],
  ['listImage on PostgreSQL', postgresListingScenarios],
  ['materials search on PostgreSQL', postgresMaterialsScenarios],
  ['shared limiter', sharedLimiterScenarios],
  ['catch', catchScenario],
  ['formula flood', formulaFloodScenario],
  ['Word', wordScenario],
]

const argument = (flag: string) => {
  const at = process.argv.indexOf(flag)
  return at > 0 ? process.argv[at + 1] : undefined
}
// `--largest <n>`: no population above n files or materials, for a shorter partial run.
const largest = argument('--largest')
if (largest !== undefined && !/^[1-9]\d*$/.test(largest))
  throw new Error(`--largest ${largest}: give a whole number of files, such as 100000`)
const chosen = process.argv.includes('--smoke') ? SMOKE : FULL
const sized = largest === undefined ? chosen : upTo(chosen, Number(largest))
// `--big`: the SQLite listing also at 10M files (smoke: 5,000), that index kept in the cache
// folder (`--cache <dir>`, by default ~/.cache/ueditor-backend-bench) for the next run.
const cacheDir =
  argument('--cache') ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'ueditor-backend-bench')
const profile: Profile = process.argv.includes('--big')
  ? { ...sized, big: { images: chosen.smoke ? 5_000 : 10_000_000, cacheDir } }
  : sized
// `--only <name>`: the scenario groups whose name contains it, for working on one of them.
const only = argument('--only')
if (only !== undefined && !SCENARIOS.some(([name]) => name.includes(only)))
  throw new Error(
    `--only ${only}: no scenario group is named so (${SCENARIOS.map(([n]) => n).join(', ')})`,
  )
const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryMb: Math.round(totalmem() / 2 ** 20),
  freeMemoryMb: Math.round(freemem() / 2 ** 20),
  node: process.version,
}
const partial = largest === undefined ? '' : ` (partial: populations up to ${largest})`
console.log(
  `ueditor-backend bench${profile.smoke ? ' (smoke: tiny populations, targets not enforced)' : ''}${partial}: ` +
    `${machine.cpus} CPUs, ${machine.memoryMb} MB, Node ${machine.node}`,
)

// Every file the run stores stays until it ends (context.ts): about 16 GB in a full run.
const NEEDED_GB = profile.smoke ? 1 : 20
const volume = await statfs(tmpdir())
const freeGb = (volume.bavail * volume.bsize) / 2 ** 30
if (freeGb < NEEDED_GB) {
  console.error(`the run needs ${NEEDED_GB} GB free under ${tmpdir()}; ${freeGb.toFixed(1)} GB are`)
  process.exit(1)
}

// Ctrl-C or a kill ends the run through `exit`, whose hooks stop the servers (processes.ts)
// and the PostgreSQL cluster (tests/helpers/postgres.ts), which would otherwise outlive it.
process.once('SIGINT', () => process.exit(130))
process.once('SIGTERM', () => process.exit(143))

const outcomes: Outcome[] = []
// Each group's length and the share of the machine's CPU the hypervisor gave other guests
// meanwhile: on a shared host, what tells a slow group from a slow machine.
const groups: { name: string; seconds: number; stolenShare: number }[] = []
try {
  for (const [name, scenario] of SCENARIOS) {
    if (only !== undefined && !name.includes(only)) continue
    const began = performance.now()
    const machineBefore = machineCpuTicks()
    process.stdout.write(`${name}... `)
    try {
      outcomes.push(...(await scenario(profile)).map(judge))
    } catch (e) {
      outcomes.push(e instanceof PostgresUnavailable ? skipped(name, e.message) : broken(name, e))
    }
    const seconds = (performance.now() - began) / 1000
    const stolenShare = stolenSince(machineBefore)
    groups.push({ name, seconds, stolenShare })
    console.log(`${seconds.toFixed(1)} s, ${stolenText(stolenShare)}`)
  }
} finally {
  await stopPostgres()
  await removeScratch()
}

console.log(`\n${table(outcomes)}\n`)
await writeResults(RESULTS, {
  smoke: profile.smoke,
  ...(largest === undefined ? {} : { largest: Number(largest) }),
  machine,
  groups,
  outcomes,
})
const { passed, failed } = tally(outcomes)
const errors = outcomes.filter((o) => o.status === 'ERROR').length
const harness = errors ? `, ${errors} harness errors` : ''
// The smoke run proves the harness, not the targets; its line must not read as a test summary.
if (profile.smoke)
  console.log(`smoke run: targets met ${passed}, not met ${failed} (not enforced)${harness}`)
else console.log(`${passed} passed, ${failed} failed${harness}`)
console.log(`results: ${RESULTS}`)
process.exitCode = errors > 0 || (failed > 0 && !profile.smoke) ? 1 : 0
