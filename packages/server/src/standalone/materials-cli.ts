import { readFile, rename, writeFile } from 'node:fs/promises'
import type { MetadataStore } from '../db/types.js'
import { exportMaterials, importMaterials, type TransferCounts } from '../materials/transfer.js'
import { isUeError } from '../shared/errors.js'
import { parseJsonSafely } from '../shared/json-body.js'
import { readArgs } from './args.js'
import { MATERIALS_USAGE } from './usage.js'
import { withStore } from './with-store.js'

/** `ueditor-server materials …`; returns the exit code. */
export async function runMaterialsCommand(args: readonly string[]): Promise<number> {
  const usage = (problem: string) => {
    process.stderr.write(`${problem}\n\n${MATERIALS_USAGE}\n`)
    return 2
  }
  const [command, ...rest] = args
  const parsed = readArgs(rest, {
    flags: command === 'import' ? ['create-index'] : [],
    positionals: 1,
  })
  if ('problem' in parsed) return usage(parsed.problem)
  const create = parsed.flags.has('create-index')
  const [file] = parsed.positionals
  if (command === 'import') {
    if (file === undefined) return usage('materials import needs a file.')
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      process.stderr.write(`No such file: ${file}\n`)
      return 1
    }
    return withStore((store) => runImport(store, file, text), {
      create,
      hint: 'On a new install, import with --create-index.',
    })
  }
  if (command === 'export') return withStore((store) => runExport(store, file))
  return usage(command === undefined ? 'Missing command.' : `Unknown command "${command}".`)
}

async function runImport(store: MetadataStore, file: string, text: string): Promise<number> {
  let doc: unknown
  try {
    doc = parseJsonSafely(text)
    const summary = await importMaterials(store.materials, doc)
    process.stdout.write(
      `Imported ${file}\n` +
        `  categories: ${counts(summary.categories)}\n` +
        `  materials:  ${counts(summary.materials)}\n`,
    )
    return 0
  } catch (err) {
    if (isUeError(err) && err.status < 500) {
      process.stderr.write(`Import refused, nothing was written: ${err.detail ?? err.code}\n`)
      return 1
    }
    throw err
  }
}

async function runExport(store: MetadataStore, file: string | undefined): Promise<number> {
  const doc = await exportMaterials(store.materials)
  const text = `${JSON.stringify(doc, null, 2)}\n`
  if (file === undefined) {
    // The binary exits right after: wait until a piped stdout has taken everything.
    await new Promise<void>((resolve, reject) =>
      process.stdout.write(text, (err) => (err ? reject(err) : resolve())),
    )
    return 0
  }
  // Written next to the target and renamed, so a reader never sees half a file.
  const partial = `${file}.${process.pid}.partial`
  await writeFile(partial, text)
  await rename(partial, file)
  process.stdout.write(
    `Exported ${doc.categories.length} categories and ${doc.materials.length} materials to ${file}\n`,
  )
  return 0
}

function counts(c: TransferCounts): string {
  return `${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`
}
