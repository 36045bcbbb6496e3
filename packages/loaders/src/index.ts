import { loadingTracker } from './loading.js'
import { mapCategories, mapMaterialPage } from './map.js'
import { joinUrl, requestJson, requestSettings } from './request.js'
import type {
  LoaderOptions,
  MaterialCategory,
  MaterialQueryParams,
  StyleListData,
} from './types.js'

export type * from './types.js'
export { mapCategories, mapMaterialPage }

export type CategoryLoader = (() => Promise<MaterialCategory[]>) & {
  /** Drops the cached answer; the next call asks the server again. */
  invalidate(): void
}
export type StyleLoader = (params?: MaterialQueryParams) => Promise<StyleListData>

const DEFAULT_PAGE = 1
const DEFAULT_PAGE_SIZE = 20

type Track = ReturnType<typeof loadingTracker>

/** `categoryLoader`: never rejects; failures give `[]` and are not cached. */
export function createCategoryLoader(options: LoaderOptions = {}, track?: Track): CategoryLoader {
  const settings = requestSettings(options)
  const url = joinUrl(options.baseUrl, options.categoriesPath ?? '/materials/categories')
  const cache = options.cacheCategories ?? true
  const ttl = options.cacheTtl ?? 5 * 60_000
  const withLoading = track ?? loadingTracker(options.onLoadingChange)
  let cached: { value: MaterialCategory[]; until: number } | undefined
  let inFlight: Promise<MaterialCategory[]> | undefined

  const fetchTree = async () => {
    const tree = mapCategories(await requestJson(settings, url, { method: 'GET' }))
    if (cache) cached = { value: tree, until: Date.now() + ttl }
    return tree
  }

  const loader = (async () => {
    if (cache && cached && Date.now() < cached.until) return structuredClone(cached.value)
    if (!cache) return withLoading(fetchTree).catch(() => [])
    inFlight ??= withLoading(fetchTree).finally(() => {
      inFlight = undefined
    })
    return inFlight.then(
      (tree) => structuredClone(tree),
      () => [],
    )
  }) as CategoryLoader
  loader.invalidate = () => {
    cached = undefined
  }
  return loader
}

/**
 * `styleLoader`: POSTs `{categoryId, keyword, page, pageSize}` and maps the answer. Never
 * rejects: failures and superseded calls give an empty page with the requested paging.
 */
export function createStyleLoader(options: LoaderOptions = {}, track?: Track): StyleLoader {
  const settings = requestSettings(options)
  const url = joinUrl(options.baseUrl, options.materialsPath ?? '/materials/materials')
  const abortSuperseded = options.abortSuperseded ?? true
  const withLoading = track ?? loadingTracker(options.onLoadingChange)
  let current: AbortController | undefined

  return async (params = {}) => {
    const page = positive(params.page) ?? DEFAULT_PAGE
    const pageSize = positive(params.pageSize) ?? DEFAULT_PAGE_SIZE
    const empty: StyleListData = { records: [], total: 0, page, pageSize }
    const controller = new AbortController()
    if (abortSuperseded) {
      current?.abort(new DOMException('superseded', 'AbortError'))
      current = controller
    }
    const body = { categoryId: params.categoryId, keyword: params.keywords ?? '', page, pageSize }
    try {
      const answer = await withLoading(() =>
        requestJson(settings, url, { method: 'POST', body }, controller.signal),
      )
      if (controller.signal.aborted) return empty
      return mapMaterialPage(answer, { page, pageSize })
    } catch {
      return empty
    } finally {
      if (current === controller) current = undefined
    }
  }
}

/** Both loaders sharing one loading state, ready for the designer's config object. */
export function createMaterialLoaders(options: LoaderOptions = {}): {
  categoryLoader: CategoryLoader
  styleLoader: StyleLoader
} {
  const track = loadingTracker(options.onLoadingChange)
  return {
    categoryLoader: createCategoryLoader(options, track),
    styleLoader: createStyleLoader(options, track),
  }
}

function positive(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined
}

export { uploadService } from './upload/service.js'
export type * from './upload/types.js'
export type { WordPaste, WordPasteEditor, WordPasteOptions, WordPasteReport } from './word/paste.js'
export { wordPaste } from './word/paste.js'
export type { RtfPicture, RtfPictureFormat } from './word/rtf-pictures.js'
export { cropFractions, displaySize, rtfPictures, wmfFile } from './word/rtf-pictures.js'
export type { WordImportAnswer, WordImportEditor, WordImportOptions } from './word-import.js'
export { sendToServer, wordImport } from './word-import.js'
