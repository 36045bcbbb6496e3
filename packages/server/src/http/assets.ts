import { readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { UeError } from '../shared/errors.js'
import { errorResponse } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'

export interface Asset {
  /** Absolute path of the file on disk. */
  file: string
  contentType: string
}

/**
 * Serves a fixed set of small public files (the loaders bundle, the example page) by exact
 * URL path. Files are read on first use and kept in memory; anything else is a 404.
 */
export function createAssetServer(assets: ReadonlyMap<string, Asset>): FetchHandler {
  const cache = new Map<string, Promise<Buffer>>()
  return async (request) => {
    const { pathname } = new URL(request.url)
    const asset = assets.get(pathname)
    if (!asset || (request.method !== 'GET' && request.method !== 'HEAD'))
      return errorResponse(new UeError('UE_NOT_FOUND'))
    let body = cache.get(pathname)
    if (!body) {
      body = readFile(asset.file)
      cache.set(pathname, body)
      body.catch(() => cache.delete(pathname))
    }
    const bytes = await body
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(bytes), {
      headers: {
        'Content-Type': asset.contentType,
        'Content-Length': String(bytes.length),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'public, max-age=300',
        // Public code with no credentials: any origin may load it as a module script.
        'Access-Control-Allow-Origin': '*',
      },
    })
  }
}

/**
 * The browser files of `@ueditor-backend/loaders`, when that package is installed: the ESM
 * bundle at `<materials>/loaders.js` with its chunks, the IIFE at `<materials>/loaders.iife.js`,
 * and the example page at `/examples/designer.html`.
 */
export function loaderAssets(materialsPrefix: string): Map<string, Asset> {
  const assets = new Map<string, Asset>()
  let dir: string
  try {
    dir = dirname(createRequire(import.meta.url).resolve('@ueditor-backend/loaders/package.json'))
  } catch {
    return assets
  }
  const js = 'text/javascript; charset=utf-8'
  assets.set(`${materialsPrefix}loaders.js`, {
    file: join(dir, 'dist/bundle/loaders.min.js'),
    contentType: js,
  })
  assets.set(`${materialsPrefix}loaders.iife.js`, {
    file: join(dir, 'dist/bundle/loaders.iife.min.js'),
    contentType: js,
  })
  // The ES module's chunks (the tus client, loaded on the first tus upload), under their own
  // names next to it, where its relative imports look for them.
  for (const name of bundleChunks(join(dir, 'dist/bundle')))
    assets.set(`${materialsPrefix}${name}`, {
      file: join(dir, 'dist/bundle', name),
      contentType: js,
    })
  assets.set('/examples/designer.html', {
    file: join(dir, 'examples/designer.html'),
    contentType: 'text/html; charset=utf-8',
  })
  return assets
}

function bundleChunks(folder: string): string[] {
  try {
    return readdirSync(folder).filter((name) => /^loaders-[\w-]+\.min\.js$/.test(name))
  } catch {
    return []
  }
}
