/** The UEditor Plus Designer's types (its `dist/types/types/index.d.ts`). */
export type Id = number | string

export interface MaterialCategory {
  id: Id
  title: string
  pid?: Id
  sort?: number
  _child?: MaterialCategory[]
}

export interface MaterialQueryParams {
  categoryId?: Id
  keywords?: string
  page?: number
  pageSize?: number
}

export interface MaterialItem {
  id: Id
  title: string
  html: string
  categoryId?: Id
  cover?: string
  [custom: string]: unknown
}

export interface StyleListData {
  records: MaterialItem[]
  total: number
  page: number
  pageSize: number
}

/** What the materials service answers (docs/materials.md, Read API). */
export interface ServiceCategory {
  id: Id
  name: string
  parentId?: Id | null
  order?: number
  children?: ServiceCategory[]
}

export interface ServiceMaterial {
  id: Id
  name: string
  content: string
  categoryId?: Id
  thumbnail?: string
  [custom: string]: unknown
}

export interface ServiceMaterialPage {
  items: ServiceMaterial[]
  total: number
  page?: number
  pageSize?: number
}

export interface LoaderOptions {
  /** Origin (and base path) of the server, e.g. `https://api.example.com`. Default: same origin. */
  baseUrl?: string
  /** Default `/materials/categories`. */
  categoriesPath?: string
  /** Default `/materials/materials`. */
  materialsPath?: string
  /** Returns the Bearer token; default reads `localStorage[tokenKey]`. */
  getToken?: () => string | null | undefined | Promise<string | null | undefined>
  /** localStorage key of the default token getter. Default `access_token`. */
  tokenKey?: string
  /** Injectable fetch. Default `globalThis.fetch`. */
  fetch?: typeof fetch
  /** Retries after the first attempt for network errors, timeouts, 5xx and 429. Default 3. */
  retries?: number
  /** Wait before retry number `n` (1-based). Default `n * 1000` ms. */
  retryDelay?: (retry: number) => number
  /** Per-attempt timeout in ms. Default 10000. */
  timeout?: number
  /** Cache successful category answers. Default true. */
  cacheCategories?: boolean
  /** How long a cached category answer lives, in ms. Default 5 minutes. */
  cacheTtl?: number
  /** Abort a still-running styleLoader call when a new one starts. Default true. */
  abortSuperseded?: boolean
  /** Called with true when the first request starts and false when the last one ends. */
  onLoadingChange?: (loading: boolean) => void
}
