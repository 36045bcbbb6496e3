#!/usr/bin/env node
// `npm run save-sqlite-schema`: saves the schema the migrations make as the statements a new
// SQLite index is created from (packages/server/src/db/sqlite-saved-schema.ts says why). Run it
// after adding a migration; a test fails until the saved schema matches the migrations.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { replayedSqliteSchema } from '../packages/server/dist/src/db/sqlite-schema-source.js'

const file = fileURLToPath(
  new URL('../packages/server/src/db/sqlite-schema.generated.ts', import.meta.url),
)
const schema = await replayedSqliteSchema()
writeFileSync(
  file,
  `// Written by \`npm run save-sqlite-schema\` from the migrations (db/migrations.ts): do not edit.
import type { SavedSqliteSchema } from './sqlite-saved-schema.js'

export const SQLITE_SCHEMA: SavedSqliteSchema = ${JSON.stringify(schema, null, 2)}
`,
)
const biome = fileURLToPath(new URL('../node_modules/@biomejs/biome/bin/biome', import.meta.url))
execFileSync(process.execPath, [biome, 'format', '--write', file], { stdio: 'ignore' })
console.log(`saved ${schema.statements.length} statements (${schema.migrations.at(-1)}) to ${file}`)
