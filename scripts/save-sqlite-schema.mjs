#!/usr/bin/env node
// `npm run save-sqlite-schema`: saves the schema the migrations make as the statements a new
// SQLite index is created from (packages/server/src/db/sqlite-saved-schema.ts says why), and the
// rows importing the demo materials writes into it, which a first start writes as they are
// (packages/server/src/materials/seed.ts). Run it after adding a migration or changing the demo
// materials; a test fails until what is saved matches them.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { replayedSqliteSchema } from '../packages/server/dist/src/db/sqlite-schema-source.js'
import { importedDemoRows } from '../packages/server/dist/src/materials/saved-demo-source.js'

const biome = fileURLToPath(new URL('../node_modules/@biomejs/biome/bin/biome', import.meta.url))
const db = new URL('../packages/server/src/db/', import.meta.url)

/** Writes `value` as the generated module `name` of db/, typed `type` from `from`. */
function save(name, constant, type, from, value) {
  const file = fileURLToPath(new URL(name, db))
  writeFileSync(
    file,
    `// Written by \`npm run save-sqlite-schema\`: do not edit.
import type { ${type} } from '${from}'

export const ${constant}: ${type} = ${JSON.stringify(value, null, 2)}
`,
  )
  execFileSync(process.execPath, [biome, 'format', '--write', file], { stdio: 'ignore' })
  return file
}

const schema = await replayedSqliteSchema()
const schemaFile = save(
  'sqlite-schema.generated.ts',
  'SQLITE_SCHEMA',
  'SavedSqliteSchema',
  './sqlite-saved-schema.js',
  schema,
)
console.log(
  `saved ${schema.statements.length} statements (${schema.migrations.at(-1)}) to ${schemaFile}`,
)
const demo = await importedDemoRows()
const demoFile = save(
  'sqlite-demo.generated.ts',
  'SQLITE_DEMO',
  'SavedRows',
  './sqlite-saved-rows.js',
  demo,
)
console.log(
  `saved ${demo.tables.map((t) => `${t.rows.length} ${t.table}`).join(', ')} to ${demoFile}`,
)
