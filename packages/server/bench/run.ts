/**
 * `npm run bench`: each scenario beside its bare baseline in the same run (docs/benchmarks.md).
 * `npm run bench -- --smoke` runs the same harness on tiny populations and never fails on targets.
 * Loopback only; every load is bounded in time or count, so the run stops by itself.
 */
import { statfs } from 'node:fs/promises'
import { cpus, freemem, tmpdir, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { FULL, type Profile, removeScratch, SMOKE } from './context.js'
import { broken, judge, type Outcome, type Row, table, tally, writeResults } from './report.js'
import { catchScenario } from './scenarios/catch.js'
import { configScenario } from './scenarios/config.js'
import { formulaFloodScenario } from './scenarios/formula-flood.js'
import { listingScenarios } from './scenarios/listings.js'
import { materialsScenarios } from './scenarios/materials.js'
import { largeUploadScenarios, smallUploadScenarios } from './scenarios/uploads.js'

const RESULTS = fileURLToPath(new URL('../../bench/results.json', import.meta.url))

const SCENARIOS: [string, (p: Profile) => Promise<Row[]>][] = [
  ['config GET', configScenario],
  ['100 KB PNG uploads', smallUploadScenarios],
  ['large uploads', largeUploadScenarios],
  ['listImage', listingScenarios],
  ['materials search', materialsScenarios],
  ['catch', catchScenario],
  ['formula flood', formulaFloodScenario],
]

const profile = process.argv.includes('--smoke') ? SMOKE : FULL
// `--only <name>`: the scenario groups whose name contains it, for working on one of them.
const onlyAt = process.argv.indexOf('--only')
const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined
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
console.log(
  `ueditor-backend bench${profile.smoke ? ' (smoke: tiny populations, targets not enforced)' : ''}: ` +
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

const outcomes: Outcome[] = []
try {
  for (const [name, scenario] of SCENARIOS) {
    if (only !== undefined && !name.includes(only)) continue
    const began = performance.now()
    process.stdout.write(`${name}... `)
    try {
      outcomes.push(...(await scenario(profile)).map(judge))
    } catch (e) {
      outcomes.push(broken(name, e))
    }
    console.log(`${((performance.now() - began) / 1000).toFixed(1)} s`)
  }
} finally {
  await removeScratch()
}

console.log(`\n${table(outcomes)}\n`)
await writeResults(RESULTS, { smoke: profile.smoke, machine, outcomes })
const { passed, failed } = tally(outcomes)
const errors = outcomes.filter((o) => o.status === 'ERROR').length
const harness = errors ? `, ${errors} harness errors` : ''
// The smoke run proves the harness, not the targets; its line must not read as a test summary.
if (profile.smoke)
  console.log(`smoke run: targets met ${passed}, not met ${failed} (not enforced)${harness}`)
else console.log(`${passed} passed, ${failed} failed${harness}`)
console.log(`results: ${RESULTS}`)
process.exitCode = errors > 0 || (failed > 0 && !profile.smoke) ? 1 : 0
